#pragma once

// Whether the client of a connection is still there while its request is
// being answered (issue #29): RESTinio reads nothing then, so it would only
// learn at the answer that the client went; work for a request nobody waits
// for would go on until its deadline.

#include <restinio/all.hpp>

#include <functional>

namespace mailassay::http {

/// Calls `gone`, on `sock`'s executor, if the client of `sock` closes (FIN
/// or reset) before it sends more bytes; bytes (a pipelined request) end
/// the watch: the client is still there. A client that only shut down its
/// sending side looks the same and is taken as gone, as nginx takes it (its
/// 499). Closing or destroying the socket ends the watch without a call.
/// For a connection RESTinio does not read from meanwhile (a request being
/// answered); the bytes stay for its next read.
void watch_peer(asio::ip::tcp::socket& sock, std::function<void()> gone);

} // namespace mailassay::http

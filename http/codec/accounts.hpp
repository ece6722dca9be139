#pragma once

// The account documents: sign-up, login and refresh bodies, the session
// and token pair, users, organizations, members, `GET /v2/auth/me`.

#include "core/base/expected.hpp"
#include "http/codec/json_text.hpp"
#include "http/exchange.hpp"
#include "use_cases/accounts/types.hpp"

#include <string>
#include <utility>
#include <vector>

namespace mailassay::http::codec {

/// A sign-up body: {organizationName, email, password, name?}.
core::expected<use_cases::accounts::signup_input>
signup(const request_view& req);

/// A login body: {email, password}, as (email, password).
core::expected<std::pair<std::string, std::string>>
login(const request_view& req);

/// A refresh or logout body: {refreshToken}.
core::expected<std::string> refresh_token(const request_view& req);

/// A new member body: {email, password, name?, role?}.
core::expected<use_cases::accounts::new_member_input>
new_member(const request_view& req);

/// A member's role change: {role}.
core::expected<core::account::role> role_change(const request_view& req);

/// A user: {id, email, name, createdAt}.
json user(const core::account::user& u);

/// An organization: {id, name, createdAt}.
json organization(const core::account::organization& o);

/// A member: the user with its role and organizationId.
json member(const core::account::member& m);

/// The members of an organization: {items: [member]}.
json members(const std::vector<core::account::member>& list);

/// {accessToken, refreshToken, expiresIn, tokenType}.
json token_pair(const use_cases::accounts::session& s);

/// The token pair with the user, organization and role of a session.
json session(const use_cases::accounts::session& s);

/// `GET /v2/auth/me`: the organization and the user or API key asking.
json me(const use_cases::accounts::me_view& m);

/// Appends what `text_of(me(view))` writes for an API key's `view` (key `k`
/// of organization `org`), written directly: the answer of a cached key's
/// `GET /v2/auth/me` (docs/performance.md).
void write_key_me(std::string& out, const core::account::api_key& k,
                  const core::account::organization& org);

/// `GET /v2/organization`: the organization, its members and credits.
json organization_view(const use_cases::accounts::organization_view& v);

/// Decodes PATCH /v2/organization: {"batchRetentionSeconds": integer or
/// null} (null: back to the server's retention); the field is required,
/// others are refused (422).
core::expected<std::optional<std::int64_t>>
organization_patch(const request_view& req);

} // namespace mailassay::http::codec

#pragma once

// The registry: every setting, one row each (config/key_spec.hpp), in the
// order `mailassay config` lists them. The rows live in one file per group
// of sections (config/registry_*.cpp).

#include "config/key_spec.hpp"

#include <string>
#include <vector>

namespace mailassay::config::keys {

/// Every setting, in order: the service's, then batch, SMTP and egress,
/// then webhooks.
const std::vector<key_spec>& registry();

/// The rows of [http], [control], [database], [auth], [credits], [log],
/// [limits], [redis], [actors], [dns], [validation] and [risk].
std::vector<key_spec> service_keys();
/// The rows of [batch], [smtp] and [egress].
std::vector<key_spec> batch_smtp_keys();
/// The rows of [webhooks].
std::vector<key_spec> webhook_keys();

/// The prefix of a section's variables: MAILASSAY_<SECTION>_.
std::string env_prefix(const std::string& section);
/// The variable of a row: MAILASSAY_<SECTION>_<KEY>.
std::string env_name(const key_spec& k);

/// The row of `section`.`key`, or nullptr.
const key_spec* find_key(const std::string& section, const std::string& key);

} // namespace mailassay::config::keys

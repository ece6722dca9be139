#pragma once

#include "core/account/records.hpp"

namespace mailassay::core::account {

/// Owners and admins create, change and revoke API keys (spec: 403 for member).
bool may_manage_keys(role actor);

/// Owners and admins add, change and remove members.
bool may_manage_members(role actor);

/// Owners and admins erase the organization's data (a batch job, its
/// export); a member may not (docs/privacy.md).
bool may_erase_data(role actor);

/// Only an owner sets the organization's own retention of batch results
/// (PATCH /v2/organization, docs/privacy.md); an admin or member may not.
bool may_set_retention(role actor);

/// Only an owner erases the whole organization (DELETE /v2/organization,
/// docs/privacy.md); an admin may export it but not erase it.
bool may_erase_organization(role actor);

/// Only an owner may create or promote owners, or change/remove an owner.
bool may_assign_role(role actor, role current, role wanted);

/// What an API key is used for, as far as its rights tell apart.
enum class key_use {
  widget_validation, ///< `POST /v2/widget/validate`.
  validation,        ///< `POST /v2/email/validate` without an SMTP probe.
  smtp_validation,   ///< `POST /v2/email/validate` with `smtp: true`.
  account,           ///< Anything else: batches, credits, keys, usage, ...
};

/// Whether `k` is publishable: restricted with `allowedDomains`, so that it
/// may sit in a page's HTML, where anyone can copy it and forge its Origin.
bool publishable(const api_key& k);

/// Whether key `k` may be used for `use`. A publishable key only validates
/// single addresses without an SMTP probe (the widget's and the validate
/// endpoint's work): a copied key reads no data, spends no credit and
/// starts no batch, whatever Origin its user claims (docs/security.md).
bool may_use_key(const api_key& k, key_use use);

/// Which batch jobs a credential sees, by the jobs' sandbox flag.
enum class job_scope {
  all,          ///< A user (JWT or cookie session): the dashboard shows all.
  live_only,    ///< A `svc_live_` key.
  sandbox_only, ///< A `svc_test_` key: its jobs run in the sandbox.
};

/// The jobs key `k` sees, or a user's when `k` is null.
job_scope job_scope_of(const api_key* k);

/// Whether a job with sandbox flag `sandbox` is within `scope`.
bool in_job_scope(job_scope scope, bool sandbox);
} // namespace mailassay::core::account

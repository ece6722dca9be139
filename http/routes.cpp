#include "http/handler_support.hpp"

namespace mailassay::http {

const std::vector<route>& routes() {
  // One line per endpoint. Literal paths come before parameterised ones.
  // The fourth column names the query parameters an endpoint reads, the
  // fifth its body limit, the last what the server treats apart.
  static const std::vector<route> table = {
    {"GET", "/health", handle_health},
    {"GET", "/status", handle_status},
    {"GET", "/metrics", handle_metrics},
    {"GET", "/docs", handle_docs, any_query},
    {"GET", "/v2/openapi.json", handle_openapi, any_query},
    {"POST", "/v2/auth/signup", handle_signup, "session"},
    {"POST", "/v2/auth/login", handle_login, "session"},
    {"POST", "/v2/auth/refresh", handle_refresh},
    {"POST", "/v2/auth/logout", handle_logout},
    {"GET", "/v2/auth/options", handle_auth_options},
    {"GET", "/v2/auth/me", handle_me},
    {"GET", "/v2/organization", handle_get_organization},
    {"PATCH", "/v2/organization", handle_update_organization},
    {"DELETE", "/v2/organization", handle_delete_organization},
    {"GET", "/v2/organization/export", handle_export_organization},
    {"GET", "/v2/organization/members", handle_list_members},
    {"GET", "/v2/audit-log", handle_audit_log, "limit,before,action"},
    {"POST", "/v2/organization/members", handle_add_member},
    {"PATCH", "/v2/organization/members/:userId", handle_update_member},
    {"DELETE", "/v2/organization/members/:userId", handle_remove_member},
    {"POST", "/v2/api-keys", handle_create_key},
    {"GET", "/v2/api-keys", handle_list_keys},
    {"GET", "/v2/api-keys/rate-limits", handle_rate_limits},
    {"GET", "/v2/api-keys/:id", handle_get_key},
    {"PATCH", "/v2/api-keys/:id", handle_update_key},
    {"DELETE", "/v2/api-keys/:id", handle_delete_key},
    {"POST", "/v2/api-keys/:id/revoke", handle_revoke_key},
    {"POST", "/v2/api-keys/:id/reactivate", handle_reactivate_key},
    {"GET", "/v2/api-keys/:id/stats", handle_key_stats, "days"},
    {"GET", "/v2/credits/balance", handle_balance},
    {"GET", "/v2/usage", handle_organization_usage, "days"},
    {"GET", "/v2/credits/transactions", handle_transactions, "limit,before"},
    {"POST", "/v2/email/validate", handle_validate},
    {"POST", "/v2/widget/validate", handle_widget_validate, "", 0,
     route_traits::cross_origin},
    {"GET", "/widget.js", handle_widget_script, any_query},
    // The body limit is checked by the handler (batch.max_file_bytes).
    {"POST", "/v2/batch/upload", handle_batch_upload,
     "deduplicate,smtp,emailColumn,fileName", 32 * 1024 * 1024,
     route_traits::file_upload},
    {"GET", "/v2/batch", handle_list_batches},
    {"GET", "/v2/batch/:jobId", handle_get_batch},
    {"POST", "/v2/batch/:jobId/cancel", handle_cancel_batch},
    {"DELETE", "/v2/batch/:jobId", handle_delete_batch},
    {"POST", "/batch/:jobId/cancel", handle_cancel_batch},
    {"GET", "/v2/batch/:jobId/results", handle_batch_results, "format,status"},
    {"GET", "/", handle_app_index, any_query},
    {"GET", "/app/:file", handle_app_file, any_query},
    {"GET", "/app/:dir/:file", handle_app_file, any_query},
    {"POST", "/v2/webhooks", handle_create_webhook},
    {"GET", "/v2/webhooks", handle_list_webhooks},
    {"GET", "/v2/webhooks/:id", handle_get_webhook},
    {"PATCH", "/v2/webhooks/:id", handle_update_webhook},
    {"DELETE", "/v2/webhooks/:id", handle_delete_webhook},
    {"POST", "/v2/webhooks/:id/rotate-secret", handle_rotate_webhook_secret},
    {"POST", "/v2/webhooks/:id/test", handle_test_webhook},
    {"GET", "/v2/webhooks/:id/deliveries", handle_webhook_deliveries, "limit"},
  };
  return table;
}

} // namespace mailassay::http

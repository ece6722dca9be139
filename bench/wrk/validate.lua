-- wrk script for POST /v2/email/validate (bench/http_bench.sh).
--   BENCH_API_KEY  the API key sent as "Authorization: Bearer ..."
--   BENCH_EMAIL    the address to validate
-- Every request is identical: the key is served from the key cache and the
-- domain's route from the DNS cache (the script warms both first).
local key = os.getenv("BENCH_API_KEY") or error("BENCH_API_KEY is not set")
local email = os.getenv("BENCH_EMAIL") or error("BENCH_EMAIL is not set")

wrk.method = "POST"
wrk.body = '{"email":"' .. email .. '"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. key

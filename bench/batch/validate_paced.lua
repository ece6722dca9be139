-- wrk script for POST /v2/email/validate at a bounded rate (bench/batch_bench.sh).
--   BENCH_API_KEY   the API key sent as "Authorization: Bearer ..."
--   BENCH_EMAIL     the address to validate
--   BENCH_DELAY_MS  think time of each connection between two requests
-- Each connection waits BENCH_DELAY_MS after every answer, so N connections
-- send at most N * 1000 / BENCH_DELAY_MS requests/s: real-time traffic that
-- does not saturate the machine, unlike bench/wrk/validate.lua (closed loop,
-- as fast as possible). wrk's latency does not include the think time.
local key = os.getenv("BENCH_API_KEY") or error("BENCH_API_KEY is not set")
local email = os.getenv("BENCH_EMAIL") or error("BENCH_EMAIL is not set")
local think = tonumber(os.getenv("BENCH_DELAY_MS") or "10")

wrk.method = "POST"
wrk.body = '{"email":"' .. email .. '"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. key

function delay()
  return think
end

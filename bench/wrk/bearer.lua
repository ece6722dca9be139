-- wrk script for an authenticated GET (bench/http_bench.sh, case (f)).
--   BENCH_API_KEY  the API key sent as "Authorization: Bearer ..."
local key = os.getenv("BENCH_API_KEY") or error("BENCH_API_KEY is not set")

wrk.method = "GET"
wrk.headers["Authorization"] = "Bearer " .. key

-- One cached number at a paced rate: each connection waits BENCH_DELAY_MS after an answer before it asks again, so
-- connections × 1000 / BENCH_DELAY_MS is the request rate. Env: BENCH_PATH, BENCH_TOKEN (optional), BENCH_DELAY_MS.
local token = os.getenv('BENCH_TOKEN')
local pause = tonumber(os.getenv('BENCH_DELAY_MS') or '20')
wrk.path = os.getenv('BENCH_PATH')
if token and token ~= '' then wrk.headers['Authorization'] = 'Bearer ' .. token end
function delay()
  return pause
end
dofile(os.getenv('BENCH_LUA_DIR') .. '/report.lua')

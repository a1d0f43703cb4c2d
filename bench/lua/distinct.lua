-- Distinct numbers +44 20 3xxx xxxx from BENCH_START on (the miss path). Env: BENCH_START, BENCH_LIMIT (stop
-- after that many responses; 0 = run for the duration), BENCH_TOKEN (optional), BENCH_BASE_PATH.
local token = os.getenv('BENCH_TOKEN')
local n = tonumber(os.getenv('BENCH_START'))
local limit = tonumber(os.getenv('BENCH_LIMIT') or '0')
local base = os.getenv('BENCH_BASE_PATH')
local received = 0
local headers = {}
if token and token ~= '' then headers['Authorization'] = 'Bearer ' .. token end

function request()
  local path = string.format('%s?what=%%2B44203%07d', base, n)
  n = n + 1
  return wrk.format('GET', path, headers)
end

if limit > 0 then
  function response(status, hdrs, body)
    received = received + 1
    if received >= limit then wrk.thread:stop() end
  end
end
dofile(os.getenv('BENCH_LUA_DIR') .. '/report.lua')

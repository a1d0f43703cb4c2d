-- One cached number, over and over (the hit path). Env: BENCH_PATH, BENCH_TOKEN (optional).
local token = os.getenv('BENCH_TOKEN')
wrk.path = os.getenv('BENCH_PATH')
if token and token ~= '' then wrk.headers['Authorization'] = 'Bearer ' .. token end
dofile(os.getenv('BENCH_LUA_DIR') .. '/report.lua')

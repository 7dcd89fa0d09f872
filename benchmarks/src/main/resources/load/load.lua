-- The load script gives wrk its requests for one target of LoadRun, and prints one line of
-- results that LoadRun reads. Its arguments (after --) are the target's name and, for mcp, the
-- file of MCP session ids (one a line) and the tool to call.
--
--   healthz   GET /healthz
--   invoke    POST /v1/tools/{tool}/invoke, the path in the URL; the body is the tool's arguments
--   mcp       POST /mcp, tools/call of the tool, each request in the next of many sessions
--
-- Requests are formatted once per thread, before the run: wrk then only sends them.

local counter = 0

function setup(thread)
  -- Each thread starts at another place in the sessions, so that threads do not move in step.
  thread:set("offset", counter)
  counter = counter + 1
end

local requests = nil
local next_request = 0

function init(args)
  local target = args[1]
  if target == "healthz" then
    wrk.method = "GET"
  elseif target == "invoke" then
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
    wrk.body = '{"arguments": {"a": 2, "b": 3}}'
  elseif target == "mcp" then
    requests = {}
    local ids = {}
    for line in io.lines(args[2]) do
      if line ~= "" then ids[#ids + 1] = line end
    end
    local tool = args[3]
    local host = wrk.host .. ":" .. wrk.port
    local first = (offset or 0) * #ids
    for i = 1, #ids do
      local session = ids[((i + (offset or 0) * 7919) % #ids) + 1]
      local body = '{"jsonrpc":"2.0","id":' .. (first + i) .. ',"method":"tools/call",'
        .. '"params":{"name":"' .. tool .. '","arguments":{"a":2,"b":3}}}'
      requests[i] = wrk.format("POST", wrk.path, {
        ["Host"] = host,
        ["Content-Type"] = "application/json",
        ["Accept"] = "application/json, text/event-stream",
        ["Mcp-Protocol-Version"] = "2025-06-18",
        ["Mcp-Session-Id"] = session,
      }, body)
    end
    -- Defined only here: wrk sends a script's one fixed request, formatted once, unless the
    -- script has a request function after init.
    request = function()
      next_request = next_request % #requests + 1
      return requests[next_request]
    end
  else
    error("unknown target " .. tostring(target) .. ": healthz, invoke or mcp")
  end
end


-- The CPU wrk itself used (all its threads), from /proc/self/stat: utime and stime, in ticks.
local function cpu_ticks()
  local file = io.open("/proc/self/stat", "r")
  if file == nil then return -1 end
  local stat = file:read("*a")
  file:close()
  local fields = {}
  -- The command name may hold spaces; the fields after its closing parenthesis start at field 3.
  for field in stat:match("%) (.*)"):gmatch("%S+") do fields[#fields + 1] = field end
  return tonumber(fields[12]) + tonumber(fields[13])
end

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    "LOAD requests=%d duration_us=%d bytes=%d connect_errors=%d read_errors=%d write_errors=%d"
      .. " status_errors=%d timeouts=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d cpu_ticks=%d\n",
    summary.requests, summary.duration, summary.bytes, errors.connect, errors.read, errors.write,
    errors.status, errors.timeout, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, cpu_ticks()))
end

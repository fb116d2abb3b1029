-- POSTs the body in env BODY_FILE; in a body, every "%n" becomes a per-request counter
-- (unique per thread and per run: RUN_ID, set afresh for each run, comes first), so inserts and
-- upserts can use fresh keys, a measured run's as fresh as its warm-up's. Sends
-- "Authorization: Bearer $TOKEN" when TOKEN is set, and every "Name: value" line of EXTRA_HEADERS.
-- Counts answers whose body holds "errors" (GraphQL errors come with status 200) and prints
-- "GraphQL errors: N" at the end.
local body_template = nil
local run_id = os.getenv("RUN_ID") or "0"
local counter = 0
local thread_id = 0
local threads_started = 0
local threads = {}
graphql_errors = 0

function setup(thread)
  threads_started = threads_started + 1
  thread:set("thread_id", threads_started)
  table.insert(threads, thread)
end

function init(args)
  local file = io.open(os.getenv("BODY_FILE"), "r")
  body_template = file:read("*a")
  file:close()
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  local token = os.getenv("TOKEN") or ""
  if token ~= "" then
    wrk.headers["Authorization"] = "Bearer " .. token
  end
  for name, value in (os.getenv("EXTRA_HEADERS") or ""):gmatch("([^:\n]+):%s*([^\n]*)") do
    wrk.headers[name] = value
  end
end

function request()
  counter = counter + 1
  local body = body_template:gsub("%%n", run_id .. "-" .. thread_id .. "-" .. counter)
  return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
  if body and string.find(body, '"errors"', 1, true) then
    graphql_errors = graphql_errors + 1
  end
end

function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do
    total = total + (thread:get("graphql_errors") or 0)
  end
  io.write("GraphQL errors: " .. total .. "\n")
end

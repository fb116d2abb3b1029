-- POSTs the body in env BODY_FILE; in a body, every "%n" becomes a per-request counter
-- (unique per thread), so inserts and upserts can use fresh keys.
local body_template = nil
local counter = 0
local thread_id = 0
local threads_started = 0

function setup(thread)
  threads_started = threads_started + 1
  thread:set("thread_id", threads_started)
end

function init(args)
  local file = io.open(os.getenv("BODY_FILE"), "r")
  body_template = file:read("*a")
  file:close()
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. (os.getenv("TOKEN") or "")
end

function request()
  counter = counter + 1
  local body = body_template:gsub("%%n", thread_id .. "-" .. counter)
  return wrk.format(nil, nil, nil, body)
end

-- wrk script of the feed section (scripts/bench/sections.sh): viewers polling the audience feed.
--   FEED_PATH  a fixed path (the ladder: every request the same span, or nginx's static file), or
--   FEED_ROOM  the room whose feed each request asks for: [T-3, T) with T the time floored to a whole
--              second on the 3-s grid, as the kits' FeedReader asks (every viewer the same span)
--   FEED_DELAY_MS  > 0: each connection (one viewer) polls every FEED_DELAY_MS, its first poll at a
--              random point of the first period (viewers do not poll in step); 0: as fast as it can
local path = os.getenv("FEED_PATH")
local room = os.getenv("FEED_ROOM") or "fanout"
local period = tonumber(os.getenv("FEED_DELAY_MS") or "0")
local first = {}
local viewers = tonumber(os.getenv("FEED_THREAD_CONNS") or "0")  -- connections of one wrk thread

function setup(thread)
  thread:set("seed", math.random(1, 1000000))
end

function init(args)
  math.randomseed(seed)
end

function request()
  if path then return wrk.format("GET", path) end
  local t = os.time()
  t = t - t % 3
  return wrk.format("GET", "/v2/rooms/" .. room .. "/feed?from=" .. (t - 3) .. "&to=" .. t)
end

function delay()
  if period <= 0 then return 0 end
  -- wrk calls delay() before each request of a connection; the first calls spread the viewers out.
  local n = #first
  if n < viewers then
    first[n + 1] = true
    return math.random(0, period)
  end
  return period
end

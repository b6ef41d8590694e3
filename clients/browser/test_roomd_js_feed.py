"""roomd.js's FeedReader (PROTOCOL.md section 24) in headless Chromium, served by roomd itself: the
page polls the audience feed over HTTP while a Python host runs the show over its WebSocket."""
import asyncio

from selenium.webdriver.support.ui import WebDriverWait

from test_roomd_js import browser  # noqa: F401  (the fixture)

# Runs in the page: reads the feed once a second until the show ends, then checks the grid.
READ_THE_FEED = """
const [token, done] = arguments;
const { FeedReader, FeedError } = window.roomd;
const record = window.feed = { spans: [], finished: false };
const due = new FeedReader("", "show", { clock: () => 1000.5 }).spansDue();
record.firstDue = due;
try { new FeedReader("", "show", { interval: 0 }); } catch (e) { record.badInterval = e instanceof RangeError; }
try {
  const now = Math.floor(Date.now() / 1000);
  await new FeedReader("", "show", { token }).fetchSpan(now, now + 5);
} catch (e) { record.future = e instanceof FeedError ? [e.status, e.code] : String(e); }
(async () => {
  for await (const span of new FeedReader("", "show", { token, interval: 1 })) record.spans.push(span);
  record.finished = true;
})().catch(e => { record.failure = String(e); record.finished = true; });
done(true);
"""


def test_feed_reader_follows_the_show_in_the_browser(roomd, browser):  # noqa: F811
    browser.get(roomd.http_url + "/client/")
    WebDriverWait(browser, 10).until(lambda d: d.execute_script("return document.documentElement.dataset.roomd"))

    async def scenario():
        host = await roomd.join("show", "host-1", "host", name="Ada")
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, lambda: browser.execute_async_script(
            READ_THE_FEED, roomd.token("show", "web-1", "viewer")))
        await asyncio.sleep(1.2)
        await host.broadcast("hello feed")
        await host.call("react", {"target": "stream", "type": "fire", "count": 4})
        await asyncio.sleep(1.2)
        await host.call("end-room", {"reason": "bye"})

    asyncio.run(scenario())
    WebDriverWait(browser, 15).until(lambda d: d.execute_script("return window.feed.finished"))
    record = browser.execute_script("return window.feed")
    assert record.get("failure") is None, record.get("failure")
    assert record["firstDue"] == [[996, 999]]  # floored to 1000, on the 3-s grid: 999
    assert record["badInterval"] is True
    assert record["future"] == [400, -32602]
    spans = record["spans"]
    assert [m["info"]["message"] for s in spans for m in s["chat"]] == ["hello feed"]
    assert [r["total"] for s in spans for r in s["reactions"]] == [4]
    assert all(spans[i]["to"] == spans[i + 1]["from"] for i in range(len(spans) - 1))
    assert spans[-1]["ended"] is True

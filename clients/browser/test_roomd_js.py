"""roomd.js in headless Chromium, served by roomd itself, against the real daemon.

The page is roomd's own http://127.0.0.1:PORT/client/ (same origin as
/client/roomd.js, so no CORS header is needed); a Python host (roomd package)
plays the other side of a guest call-in.
"""
import asyncio
import shutil
import urllib.request
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

MODULE = Path(__file__).resolve().parents[2] / "Sources" / "RoomServer" / "Client" / "roomd.js"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


@pytest.fixture
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_script_timeout(15)
    yield driver
    driver.quit()


# Runs in the page: joins as a viewer, records every push, answers the host's polite role change,
# publishes as a guest and waits to be removed.
JOIN_AND_WAIT_FOR_THE_STAGE = """
const [url, token, done] = arguments;
const { RoomClient, RoomError } = window.roomd;
const record = window.record = { pushes: [], finished: false };
const client = window.client = await RoomClient.connect(url);
client.on("*", (params, push) => record.pushes.push(push.method));
const joined = await client.join({ token, name: "Web" });
record.joinedRole = joined.peer.role;
try { await client.trackAdd({ type: "audio" }); } catch (e) {
  record.errorIsRoomError = e instanceof RoomError; record.errorCode = e.code;
}
(async () => {
  const hello = await client.next("on-peer-join", { timeout: 10000 });
  record.peerJoinName = hello.peer.info.name;
  const message = await client.next("on-broadcast", { timeout: 10000 });
  record.broadcast = message.info.message;
  const offer = await client.next("on-role-change-request", { timeout: 10000 });
  record.offeredRole = offer.role;
  record.newRole = (await client.roleChange(offer.token)).role;
  record.policy = (await client.next("on-policy-change")).name;
  // A predicate may extract; pushes without params.changed throw a TypeError here and do not match.
  record.roleUpdate = await client.next(p => p.params.changed.includes("role") && p.params.peer.role);
  record.track = (await client.trackAdd({ type: "audio", trackId: "web-mic" })).track_id;
  record.closeCode = await client.closeCode();   // the host removes this peer: 4001
  record.finished = true;
})().catch(e => { record.failure = String(e); record.finished = true; });
done(joined.peer.peer_id);
"""


def test_module_is_served_as_javascript(roomd):
    with urllib.request.urlopen(roomd.http_url + "/client/roomd.js", timeout=5) as answer:
        assert answer.status == 200
        assert answer.headers["Content-Type"] == "text/javascript; charset=utf-8"
        assert answer.read() == MODULE.read_bytes()   # the repository's file, as built into this binary


def test_browser_page_joins_gets_pushes_and_goes_on_stage(roomd, browser):
    browser.get(roomd.http_url + "/client/")
    WebDriverWait(browser, 10).until(lambda d: d.execute_script("return document.documentElement.dataset.roomd"))

    async def scenario():
        loop = asyncio.get_running_loop()

        def page(script, *args):  # selenium blocks: keep the asyncio loop (the host's socket) running
            return loop.run_in_executor(None, lambda: browser.execute_async_script(script, *args))

        web_peer = await page(JOIN_AND_WAIT_FOR_THE_STAGE, roomd.url, roomd.token("show", "web-1", "viewer"))
        host = await roomd.join("show", "host-1", "host", name="Ada")    # the page gets on-peer-join
        await host.broadcast("hello browser")                           # ... and on-broadcast
        token = await host.role_change_request(web_peer, "guest")       # polite: the page accepts
        assert token
        changed = await host.next("on-peer-update", where=lambda p: p["changed"] == ["role"])
        assert changed["peer"]["peer_id"] == web_peer
        assert changed["peer"]["role"] == "guest"
        added = await host.next("on-track-add", timeout=10)
        assert added["peer_id"] == web_peer and added["track"]["track_id"] == "web-mic"
        await host.peer_leave_request(web_peer, reason="thanks")
        await host.close()

    asyncio.run(scenario())
    WebDriverWait(browser, 10).until(lambda d: d.execute_script("return window.record.finished"))
    record = browser.execute_script("return window.record")
    assert record.get("failure") is None
    assert record["joinedRole"] == "viewer"
    assert record["errorIsRoomError"] is True and record["errorCode"] == 40300   # a viewer may not publish
    assert record["peerJoinName"] == "Ada"
    assert record["broadcast"] == "hello browser"
    assert record["offeredRole"] == "guest" and record["newRole"] == "guest" and record["policy"] == "guest"
    assert record["roleUpdate"] == "guest"
    assert record["track"] == "web-mic"
    assert record["closeCode"] == 4001
    assert record["pushes"][:4] == ["on-peer-join", "on-broadcast", "on-role-change-request", "on-policy-change"]


# Runs in the page as a host (moderateChat): reads the history, pins, deletes, unpins and clears it.
CHAT_AS_A_MODERATOR = """
const [url, token, done] = arguments;
const { RoomClient } = window.roomd;
const client = await RoomClient.connect(url);
const joined = await client.join({ token });
const out = { backfill: joined.chat.messages.map(m => m.info.message) };
const page = await client.chatHistory({ limit: 1 });
out.page = page.messages.map(m => m.info.message);
out.more = page.more;
const first = joined.chat.messages[0].message_id;
await client.messagePin(first);
out.pinned = (await client.next("on-message-pin")).message.message_id === first;
await client.messageDelete(first);
out.deleted = (await client.next("on-message-delete")).message_id === first;
out.unpinned = (await client.next("on-message-pin")).message === null;
await client.messagePin(null);
await client.chatClear();
out.cleared = (await client.next("on-chat-clear")).cleared_by.peer_id === joined.peer.peer_id;
out.after = (await client.chatHistory()).messages.length;
client.close();
done(out);
"""


def test_browser_page_reads_pins_deletes_and_clears_the_chat(roomd, browser):
    browser.get(roomd.http_url + "/client/")
    WebDriverWait(browser, 10).until(lambda d: d.execute_script("return document.documentElement.dataset.roomd"))

    async def scenario():
        guest = await roomd.join("chat", "g-1", "guest")
        for text in ("one", "two"):
            await guest.broadcast(text)
        loop = asyncio.get_running_loop()
        out = await loop.run_in_executor(None, lambda: browser.execute_async_script(
            CHAT_AS_A_MODERATOR, roomd.url, roomd.token("chat", "web-host", "host")))
        await guest.close()
        return out

    out = asyncio.run(scenario())
    assert out == {"backfill": ["one", "two"], "page": ["two"], "more": True, "pinned": True, "deleted": True,
                   "unpinned": True, "cleared": True, "after": 0}


# Runs in the page as a viewer: reacts to the first message, taps the stream, reads the counts, takes the reaction back.
REACTING_IN_A_PAGE = """
const [url, token, done] = arguments;
const { RoomClient } = window.roomd;
const client = await RoomClient.connect(url);
const joined = await client.join({ token });
const id = joined.chat.messages[0].message_id;
const out = {};
out.react = (await client.react(id, "like")).total;
out.taps = (await client.react("stream", "fire", { count: 5 })).total;
out.pushed = (await client.next("on-reactions")).counts.length > 0;
out.counts = (await client.reactionsGet([id, "stream"])).map(c => [c.target === id ? "message" : c.target, c.type, c.total, c.mine]);
out.unreact = (await client.unreact(id, "like")).total;
client.close();
done(out);
"""


def test_browser_page_reacts_taps_and_reads_the_counts(roomd, browser):
    browser.get(roomd.http_url + "/client/")
    WebDriverWait(browser, 10).until(lambda d: d.execute_script("return document.documentElement.dataset.roomd"))

    async def scenario():
        guest = await roomd.join("votes", "g-1", "guest")
        await guest.broadcast("vote!")
        loop = asyncio.get_running_loop()
        out = await loop.run_in_executor(None, lambda: browser.execute_async_script(
            REACTING_IN_A_PAGE, roomd.url, roomd.token("votes", "web-viewer", "viewer")))
        await guest.close()
        return out

    out = asyncio.run(scenario())
    assert out == {"react": 1, "taps": 5, "pushed": True,
                   "counts": [["message", "like", 1, 1], ["stream", "fire", 5, 5]], "unreact": 0}


# Runs in the page as a viewer: asks, votes on the guest's question, pages the list, withdraws its
# own question, and waits for the host's answer in an on-questions push.
ASKING_IN_A_PAGE = """
const [url, token, theirs, done] = arguments;
const { RoomClient } = window.roomd;
const client = await RoomClient.connect(url);
await client.join({ token });
const out = {};
const mine = await client.questionAdd("Will you come back?");
out.asked = [mine.state, mine.score, mine.pinned];
out.voted = (await client.questionVote(theirs, "up")).up;
const top = await client.questionList({ order: "top" });
out.top = [top.total, top.questions[0].question_id === theirs];
out.newest = (await client.questionList({ order: "new", limit: 1 })).questions[0].question_id === mine.question_id;
out.withdrawn = (await client.questionUpdate(mine.question_id, { state: "hidden" })).state;
try { await client.questionUpdate(theirs, { state: "answered" }); } catch (e) { out.notModerator = e.code; }
window.answered = (async () => {
  const push = await client.next(p => p.method === "on-questions"
      && p.params.changed.some(q => q.question_id === theirs && q.state === "answered"), { timeout: 10000 });
  return push.params.changed.find(q => q.question_id === theirs).pinned;
})();
done([out, mine.question_id]);
"""


def test_browser_page_asks_votes_and_sees_the_answer(roomd, browser):
    browser.get(roomd.http_url + "/client/")
    WebDriverWait(browser, 10).until(lambda d: d.execute_script("return document.documentElement.dataset.roomd"))

    async def scenario():
        host = await roomd.join("qa", "h-1", "host")
        theirs = (await host.question_add("Where was this filmed?"))["question_id"]
        loop = asyncio.get_running_loop()
        out, mine = await loop.run_in_executor(None, lambda: browser.execute_async_script(
            ASKING_IN_A_PAGE, roomd.url, roomd.token("qa", "web-viewer", "viewer"), theirs))
        visible = await host.question_list(state="hidden")
        await host.question_update(theirs, state="answered", pinned=True)
        pinned = await loop.run_in_executor(None, lambda: browser.execute_async_script(
            "window.answered.then(arguments[0], e => arguments[0](String(e)));"))
        await host.close()
        return out, mine, visible, pinned

    out, mine, hidden, pinned = asyncio.run(scenario())
    assert out == {"asked": ["open", 0, False], "voted": 1, "top": [2, True], "newest": True,
                   "withdrawn": "hidden", "notModerator": 40300}
    assert [q["question_id"] for q in hidden["questions"]] == [mine], "the host still sees the withdrawn question"
    assert pinned is True


# Runs in the page: a viewer whose token has 200 s left (under token_refresh_s: warned at once)
# refreshes it by itself; the new token's role (guest) arrives as a forced role change.
REFRESHING_IN_A_PAGE = """
const [url, token, fresh, done] = arguments;
const { RoomClient } = window.roomd;
const client = await RoomClient.connect(url);
await client.join({ token });
let asked = 0;
const stop = client.refreshTokens(async () => { asked += 1; return fresh; });
const policy = await client.next("on-policy-change", { timeout: 10000 });
stop();
const out = { role: policy.name, asked, warningsLeft: client.drain().filter(p => p.method === "on-token-expiring").length };
try { await client.rtmpStart(["rtmp://a/key"]); } catch (e) { out.rtmp = e.code; }
client.close();
done(out);
"""


def test_browser_page_refreshes_its_token_by_itself(roomd, browser):
    browser.get(roomd.http_url + "/client/")
    WebDriverWait(browser, 10).until(lambda d: d.execute_script("return document.documentElement.dataset.roomd"))
    out = browser.execute_async_script(REFRESHING_IN_A_PAGE, roomd.url, roomd.token("live", "web", "viewer", ttl=200),
                                       roomd.token("live", "web", "guest"))
    assert out == {"role": "guest", "asked": 1, "warningsLeft": 0, "rtmp": 40300}

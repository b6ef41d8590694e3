"""roomd.js's section 22 helpers in headless Chromium (the fixtures of test_roomd_js.py)."""
import asyncio

from roomd import RpcError
from selenium.webdriver.support.ui import WebDriverWait

from test_roomd_js import browser  # noqa: F401  (the fixture)

# Runs in the page as a host (moderateChat, removeOthers): slow mode, a report, a chat ban, a ban.
MODERATING_IN_A_PAGE = """
const [url, token, done] = arguments;
const { RoomClient, RoomError } = window.roomd;
const client = await RoomClient.connect(url);
const joined = await client.join({ token });
const out = { state: joined.chat.state };
out.result = await client.chatState({ slowModeS: 30 });
out.pushed = (await client.next("on-chat-state")).slow_mode_s;
const report = await client.next("on-report", { timeout: 10000 });
out.report = [report.target.type, report.reason];
await client.chatBan({ userId: "g-1", durationS: 60 });
await client.chatUnban("g-1");
const peer = report.reported_by.peer_id;
await client.peerBan({ peerId: peer, reason: "spam" });
await client.peerUnban("g-1");
try { await client.peerBan({ userId: joined.peer.info.user_id }); } catch (e) {
  out.selfBan = e instanceof RoomError && e.code;
}
client.close();
done(out);
"""

def test_browser_page_moderates_and_reports(roomd, browser):  # noqa: F811
    browser.get(roomd.http_url + "/client/")
    WebDriverWait(browser, 10).until(lambda d: d.execute_script("return document.documentElement.dataset.roomd"))

    async def scenario():
        viewer = await roomd.join("modjs", "v-1", "viewer")
        message = (await viewer.broadcast("rude"))["message_id"]
        loop = asyncio.get_running_loop()
        host = loop.run_in_executor(None, lambda: browser.execute_async_script(
            MODERATING_IN_A_PAGE, roomd.url, roomd.token("modjs", "web-host", "host")))
        await asyncio.sleep(1.0)
        # The guest side runs in Python (the page is busy with the host); slow mode is on by now.
        guest = await roomd.join("modjs", "g-1", "guest")
        await guest.broadcast("one")
        try:
            await guest.broadcast("two")
            slow = None
        except RpcError as error:
            slow = error.code
        await guest.report("insult", message_id=message)
        out = await host
        code = await guest.close_code()
        await viewer.close()
        return out, slow, code

    out, slow, code = asyncio.run(scenario())
    assert out["state"] == {"paused": False, "slow_mode_s": 0, "chat_banned": False, "until": None}
    assert out["result"] == {"paused": False, "slow_mode_s": 30} and out["pushed"] == 30
    assert out["report"] == ["message", "insult"]
    assert out["selfBan"] == -32602
    assert slow == 42901 and code == 4001

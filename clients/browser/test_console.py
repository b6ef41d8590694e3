"""The producer's console at /admin/ (PROTOCOL.md section 32) in headless Chromium, against a real roomd.

A producer opens the console, pastes a management token, finds the room and runs the show while
real WebSocket clients (the Python kit) watch: a spam message deleted, a troll banned, a caller
invited on stage, a held message approved, the audit log read. Every page is saved as a PNG under
clients/browser/screenshots/ (gitignored; the path is printed) at 1280x800, and the room's chat
also at a phone's width (390 px), for a person to look at.
"""
import asyncio
import json
import re
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from roomd import RpcError
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.support.ui import WebDriverWait

CONSOLE = Path(__file__).resolve().parents[2] / "Sources" / "RoomServer" / "Admin"
FILES = {"/admin/": "admin.html", "/admin/admin.js": "admin.js", "/admin/api.js": "api.js",
         "/admin/admin.css": "admin.css"}
TYPES = {"html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8",
         "css": "text/css; charset=utf-8"}
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
ROOM = "friday-show"
WAIT = 15


def get(url, token=None):
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def post(url, token, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=5) as answer:
        return json.loads(answer.read())


def test_console_files_carry_the_security_headers_and_need_no_token(roomd):
    for path, name in FILES.items():
        status, headers, body = get(roomd.http_url + path)
        assert status == 200, path
        assert body == (CONSOLE / name).read_bytes(), path   # the repository's file, built into the binary
        assert headers["Content-Type"] == TYPES[name.rsplit(".", 1)[1]], path
        assert headers["Content-Security-Policy"] == "default-src 'self'", path
        assert headers["X-Frame-Options"] == "DENY", path
        assert headers["Referrer-Policy"] == "no-referrer", path
        assert headers["X-Content-Type-Options"] == "nosniff", path
        assert headers["Cache-Control"] == "no-cache", path
    status, headers, _ = get(roomd.http_url + "/admin/nothing.js")
    assert status == 404 and headers["X-Frame-Options"] is None


def test_the_data_the_console_reads_needs_a_management_token(roomd):
    for route in ("/v2/active-rooms", f"/v2/active-rooms/{ROOM}/peers", f"/v2/active-rooms/{ROOM}/bans"):
        status, _, body = get(roomd.http_url + route)
        assert status == 401 and b'"code":40100' in body.replace(b" ", b""), route
    status, _, body = get(roomd.http_url + "/v2/active-rooms", roomd.token(ROOM, "v-1", "viewer"))
    assert status == 403, body    # an app token is not a management token
    status, _, _ = get(roomd.http_url + "/v2/active-rooms", roomd.management_token())
    assert status == 200


def test_settings_admin_enabled_false_turns_the_console_off(roomd_factory):
    off = roomd_factory(settings={"admin": {"enabled": False}})
    for path in (*FILES, "/admin"):
        status, _, body = get(off.http_url + path)
        assert status == 404, path
        assert b"settings.admin.enabled" in body, path
    assert get(off.http_url + "/v2/active-rooms", off.management_token())[0] == 200   # REST stays


def test_console_files_name_no_other_host_no_lasting_storage_and_no_inline_script():
    names = sorted(p.name for p in CONSOLE.iterdir() if p.suffix in (".html", ".js", ".css"))
    assert names == sorted(FILES.values())   # a new file gets a route (AdminFiles.swift) and this scan
    for name in names:
        text = (CONSOLE / name).read_text(encoding="utf-8")
        assert not re.search(r"https?:", text, re.I), f"{name}: names a URL"
        assert not re.search(r"(?<![:\w/])//[A-Za-z0-9.-]+\.[A-Za-z]{2,}", text), f"{name}: a //host reference"
        assert not re.search(r"\burl\(|@import", text), f"{name}: loads something from CSS"
        for word in ("localStorage", "document.cookie", "indexedDB", "innerHTML", "outerHTML", "eval(",
                     "new Function", "javascript:", "WebSocket", "postMessage"):
            assert word not in text, f"{name}: uses {word}"
    page = (CONSOLE / "admin.html").read_text(encoding="utf-8")
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", page, re.S | re.I)
    assert scripts and all('src="' in attrs and body.strip() == "" for attrs, body in scripts), "inline script"
    assert not re.search(r"\son[a-z]+\s*=", page, re.I), "an inline event handler"
    assert not re.search(r"\sstyle\s*=|<style", page, re.I), "inline style"
    script = (CONSOLE / "admin.js").read_text(encoding="utf-8")
    assert '"style"' not in script and "setAttribute(\"on" not in script


def test_admin_without_the_slash_is_sent_to_the_console(roomd):
    request = urllib.request.Request(roomd.http_url + "/admin")

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.build_opener(NoRedirect).open(request, timeout=5)
    assert caught.value.code == 308 and caught.value.headers["Location"] == "/admin/"


# -- the show ---------------------------------------------------------------------------------------

@pytest.fixture
def chromium():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1280,800", "--hide-scrollbars"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_script_timeout(15)
    viewport(driver, 1280, 800)
    yield driver
    driver.quit()


def viewport(driver, width, height, mobile=False):
    """The page's own size (a window's size would include the browser's frame)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


class Producer:
    """The person at the console: what they see and click (selenium, run off the asyncio loop)."""

    def __init__(self, driver, loop):
        self.driver = driver
        self.loop = loop
        SCREENSHOTS.mkdir(exist_ok=True)

    def run(self, fn, *args):
        return self.loop.run_in_executor(None, fn, *args)

    def wait_for(self, css, text=None):
        def found(driver):
            for element in driver.find_elements(By.CSS_SELECTOR, css):
                if element.is_displayed() and (text is None or text in element.text):
                    return element
            return False
        # A list redrawn while it is looked at is looked at again.
        return WebDriverWait(self.driver, WAIT, ignored_exceptions=[StaleElementReferenceException]).until(
            found, f"{css} showing {text!r}"
        )

    def click(self, label, prefix=False):
        """Clicks the button or link whose accessible name (aria-label, else its text) is `label`
        (starts with it: `prefix`); a list redrawn meanwhile is looked at again."""
        def click(driver):
            for button in driver.find_elements(By.CSS_SELECTOR, "button, a"):
                name = button.get_attribute("aria-label") or button.text
                if (name.startswith(label) if prefix else name == label) and button.is_displayed() \
                        and button.is_enabled():
                    button.click()
                    return True
            return False
        WebDriverWait(self.driver, WAIT, ignored_exceptions=(StaleElementReferenceException,)).until(
            click, f"a button named {label!r}")

    def status(self, text):
        return self.wait_for(".panel .status", text)

    def tab(self, name):
        self.click(name)
        self.wait_for("#panel-title")

    def shot(self, name):
        path = SCREENSHOTS / f"{name}.png"
        self.driver.save_screenshot(str(path))
        return path


def test_a_producer_runs_the_show_from_the_console(roomd_factory, chromium):
    roomd = roomd_factory(settings={"chat": {"hold": {"links": True}}})
    for stale in SCREENSHOTS.glob("*.png"):
        stale.unlink()

    async def scenario():
        loop = asyncio.get_running_loop()
        producer = Producer(chromium, loop)
        vera = await roomd.join(ROOM, "v-1", "viewer", name="Vera")
        troll = await roomd.join(ROOM, "troll-1", "viewer", name="Troll")
        carl = await roomd.join(ROOM, "c-1", "viewer", name="Carl")
        await vera.broadcast("Great show tonight!")
        spam = (await troll.broadcast("BUY FOLLOWERS NOW cheap cheap"))["message_id"]
        held = await carl.broadcast("my clip: www.example.org/clip")
        assert held.get("held") is True
        ask = await carl.ask_to_join_stage(note="I have a question about the finale")
        await vera.question_add("Will there be a second season?")
        await vera.report("spam", message_id=spam)

        # Sign in: the token goes into this tab's sessionStorage, nowhere else.
        await producer.run(chromium.get, roomd.http_url + "/admin/")
        await producer.run(producer.wait_for, "#token")
        # From the keyboard: the field has the focus; Enter submits.
        assert chromium.switch_to.active_element.get_attribute("id") == "token"
        await producer.run(lambda: chromium.switch_to.active_element.send_keys(roomd.management_token() + Keys.ENTER))
        await producer.run(producer.wait_for, "#rooms a", ROOM)
        assert "token" not in chromium.current_url
        stored = chromium.execute_script("return [sessionStorage.length, localStorage.length, document.cookie]")
        assert stored == [1, 0, ""]
        producer.shot("rooms")

        # The peers: find the troll by name and ban it: its socket closes 4001, a rejoin is 40301.
        await producer.run(producer.click, ROOM)
        await producer.run(producer.tab, "Peers")
        await producer.run(lambda: chromium.find_element(By.ID, "peer-search").send_keys("trol"))
        await producer.run(producer.wait_for, ".panel table", "Troll")
        assert "Vera" not in chromium.find_element(By.CSS_SELECTOR, ".panel .list").text
        producer.shot("peers")
        await producer.run(producer.click, "Ban Troll")
        assert await troll.close_code() == 4001
        with pytest.raises(RpcError) as refused:
            await roomd.join(ROOM, "troll-1", "viewer", name="Troll")
        assert refused.value.code == 40301
        await producer.run(producer.wait_for, ".panel", "banned from the console")   # the bans list

        # The call-in queue: invite Carl, who is asked to change role.
        await producer.run(producer.tab, "Call-in queue")
        await producer.run(producer.wait_for, ".panel table", "I have a question")
        producer.shot("stage")
        await producer.run(producer.click, "Invite Carl on stage")
        offer = await carl.next("on-role-change-request", timeout=WAIT)
        assert offer["role"] and offer["token"]
        await producer.run(producer.status, "Invited Carl")

        # The chat: delete the spam; the viewers' sockets hear of it.
        await producer.run(producer.tab, "Chat")
        await producer.run(producer.wait_for, "ol.chat", "BUY FOLLOWERS")
        await producer.run(producer.wait_for, "#pinned")
        producer.shot("chat")
        await producer.run(producer.click, "Delete message from Troll")
        deleted = await vera.next("on-message-delete", timeout=WAIT)
        assert deleted["message_id"] == spam
        await producer.run(producer.status, "Deleted a message from Troll")

        # Held messages: approve Carl's; everyone gets it.
        await producer.run(producer.tab, "Held")
        await producer.run(producer.wait_for, "ol.chat", "www.example.org/clip")
        producer.shot("held")
        await producer.run(producer.click, "Approve message from Carl")
        approved = await vera.next("on-broadcast", timeout=WAIT,
                                   where=lambda p: p["message_id"] == held["message_id"])
        assert approved["info"]["message"] == "my clip: www.example.org/clip"
        await producer.run(producer.wait_for, ".panel", "No held messages.")

        # A report resolved with a note, a question pinned, a poll made and started.
        await producer.run(producer.tab, "Reports")
        await producer.run(producer.wait_for, ".panel table", "spam")
        producer.shot("reports")
        await producer.run(lambda: chromium.find_element(By.CSS_SELECTOR, ".panel input[type=text]").send_keys("gone"))
        await producer.run(producer.click, "Resolve report", True)
        await producer.run(producer.wait_for, ".panel", "No open reports.")
        await producer.run(producer.tab, "Q&A")
        await producer.run(producer.click, "Pin: Will there be a second season?")
        await producer.run(producer.wait_for, ".panel table .badge", "pinned")
        producer.shot("qa")
        # A poll made elsewhere (a script, another tab) is listed too (GET polls).
        warmup = post(
            f"{roomd.http_url}/v2/active-rooms/{ROOM}/polls",
            roomd.management_token(),
            {"title": "Warm-up", "type": "poll", "questions": [
                {"question": {"text": "Ready?", "type": "single-choice"}, "options": [{"text": "Yes"}, {"text": "No"}]}
            ]},
        )
        await producer.run(producer.tab, "Polls")
        await producer.run(producer.wait_for, ".panel .card", "Warm-up")
        await producer.run(producer.wait_for, ".panel .card", warmup["poll_id"])
        for field, text in (("poll-title", "Finale"), ("poll-question", "Who wins?"), ("poll-options", "Ada\nBo")):
            await producer.run(lambda f=field, t=text: chromium.find_element(By.ID, f).send_keys(t))
        await producer.run(producer.click, "Create poll")
        await producer.run(producer.wait_for, ".panel .card", "Finale")
        await producer.run(producer.click, "Start poll", True)
        started = await vera.next("on-poll-start", timeout=WAIT)
        assert started["polls"][0]["title"] == "Finale"
        await producer.run(producer.wait_for, ".panel .card", "Bo: 0")
        producer.shot("polls")
        await producer.run(producer.tab, "Stream")
        await producer.run(producer.wait_for, ".panel", "Stream")
        producer.shot("stream")

        # The audit log names what the producer did.
        await producer.run(producer.tab, "Audit log")
        await producer.run(producer.wait_for, ".panel table", "peer.ban")
        text = chromium.find_element(By.CSS_SELECTOR, ".panel").text
        for action in ("message.delete", "peer.ban", "stage.invite", "message.approve", "report.resolve"):
            assert action in text
        producer.shot("audit")

        # A phone's width: the chat again.
        await producer.run(viewport, chromium, 390, 844, True)
        await producer.run(producer.tab, "Chat")
        await producer.run(producer.wait_for, "ol.chat", "www.example.org/clip")
        producer.shot("phone-chat")
        width = chromium.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], f"the page scrolls sideways at phone width: {width}"
        for client in (vera, carl):
            await client.close()
        return ask

    asyncio.run(scenario())
    problems = [entry["message"] for entry in chromium.get_log("browser")
                if entry["level"] == "SEVERE" and "favicon" not in entry["message"]]
    assert problems == []   # no Content-Security-Policy violation, no script error
    print(f"\nconsole screenshots: {SCREENSHOTS}")

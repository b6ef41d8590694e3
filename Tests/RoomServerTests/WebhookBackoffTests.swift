import RoomConfig
import Testing

@testable import RoomServer

/// The wait between two attempts of a webhook (PROTOCOL.md section 17):
/// 1 s · 2ⁿ ± 10 %, at most 5 minutes (issue 20, item 5: it used to double up to
/// 2^20 s, and `max_attempts: 20` waited 2^18 s before its last attempt).
@Suite struct WebhookBackoffTests {
    @Test func theBackoffDoublesFromOneSecondAndIsCappedAtFiveMinutes() {
        for attempt in 1...40 {
            let base = min(1000 << min(attempt - 1, 30), 300_000)
            let allowed = Int(Double(base) * 0.9)...min(Int(Double(base) * 1.1), 300_000)
            let outside = (0..<100).map { _ in milliseconds(WebhookSender.backoff(afterAttempt: attempt)) }
                .filter { !allowed.contains($0) }
            #expect(outside.isEmpty, "after attempt \(attempt): \(outside.prefix(3)) ms, expected \(allowed)")
        }
        #expect(milliseconds(WebhookSender.backoff(afterAttempt: 9, jitter: 1.1)) == 281_600, "256 s + 10 %")
        #expect(milliseconds(WebhookSender.backoff(afterAttempt: 10, jitter: 0.9)) == 270_000, "the cap, − 10 %")
        #expect(milliseconds(WebhookSender.backoff(afterAttempt: 10, jitter: 1.1)) == 300_000, "never over the cap")
        #expect(milliseconds(WebhookSender.backoff(afterAttempt: .max, jitter: 1.1)) == 300_000)
    }

    /// `max_attempts` stops where more attempts would only add 5-minute waits: the
    /// most the template allows waits about 20 minutes in all before giving up.
    @Test func theLargestMaxAttemptsWaitsAtMostTwentyMinutesInAll() {
        #expect(WebhookSettings.maxAttemptsRange == 1...12)
        let retries = 1..<WebhookSettings.maxAttemptsRange.upperBound
        let longest = retries.map { milliseconds(WebhookSender.backoff(afterAttempt: $0, jitter: 1.1)) }.reduce(0, +)
        #expect(longest <= 20 * 60_000, "\(longest) ms of backoff at most")
        #expect(milliseconds(WebhookSender.backoff(afterAttempt: retries.upperBound - 1, jitter: 1)) == 300_000)
    }

    private func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds) * 1000 + Int(duration.components.attoseconds / 1_000_000_000_000_000)
    }
}

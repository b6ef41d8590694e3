import Testing

@testable import RoomModel

/// What section 31 calls a link, and when its host is blocked.
@Suite struct LinksTests {
    @Test func linksAreSchemesOrWwwFollowedByAHost() {
        #expect(Links.hosts(in: "see https://Spam.example.COM/x?y") == ["spam.example.com"])
        #expect(Links.hosts(in: "HTTP://user:pw@evil.org:8080/path") == ["evil.org"])
        #expect(Links.hosts(in: "go to www.Shop.io, now") == ["www.shop.io"])
        #expect(Links.hosts(in: "(http://a.b) and [https://c.d]") == ["a.b", "c.d"])
        #expect(Links.hosts(in: "bare example.com is not a link").isEmpty)
        #expect(Links.hosts(in: "www. nothing, http:// nothing, awww.x.com").isEmpty)
        #expect(Links.hosts(in: "trailing dot http://x.org. ok") == ["x.org"])
    }

    @Test func aHostIsBlockedByItselfOrAParentDomain() {
        let blocked: Set<String> = ["spam.com", "evil.co.uk"]
        #expect(Links.isBlocked("spam.com", by: blocked))
        #expect(Links.isBlocked("www.ads.spam.com", by: blocked))
        #expect(Links.isBlocked("x.evil.co.uk", by: blocked))
        #expect(!Links.isBlocked("notspam.com", by: blocked), "a suffix that is not a whole label")
        #expect(!Links.isBlocked("co.uk", by: blocked))
        #expect(!Links.isBlocked("spam.com.example.org", by: blocked))
    }
}

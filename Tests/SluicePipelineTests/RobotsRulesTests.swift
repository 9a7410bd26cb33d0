import Testing

@testable import SluicePipeline

/// robots.txt as RFC 9309 reads it, for one user agent.
@Suite struct RobotsRulesTests {
    static let text = """
        # a comment
        User-agent: *
        Disallow: /private/
        Allow: /private/open.html
        Disallow: /*.pdf$
        Crawl-delay: 2

        User-agent: OtherBot
        Disallow: /

        User-agent: sluice
        User-agent: another
        Disallow: /drafts/
        Disallow:
        """

    @Test func aByteOrderMarkBeforeTheFirstLineIsNotPartOfItsField() {
        // Seen failing (session 46's campaign): the BOM made the first field `\u{FEFF}user-agent`, so the
        // rules after it belonged to no group and every page was allowed.
        let rules = RobotsRules(text: "\u{FEFF}User-agent: *\nDisallow: /private/\n", userAgent: "sluice/1.0")
        #expect(!rules.allows("/private/a.html"))
        #expect(rules.allows("/public/a.html"))
    }

    @Test func rulesAndPathsCompareInOneSpelling() {
        // RFC 9309 §2.2.2 (seen failing in session 46's campaign): UTF-8 against its percent-encoding,
        // an encoded unreserved character against itself.
        let rules = RobotsRules(text: "User-agent: *\nDisallow: /privé/\nDisallow: /%7Ejoe/\n", userAgent: "sluice")
        #expect(!rules.allows("/priv%C3%A9/a.txt"))
        #expect(!rules.allows("/priv%c3%a9/a.txt"))
        #expect(!rules.allows("/~joe/b.txt"))
        #expect(rules.allows("/private/a.txt"))
        #expect(RobotsRules.normalized("/a%2Fb%7e") == "/a%2Fb~")
    }

    @Test func theStarGroupWhenNoneNamesTheAgent() {
        let rules = RobotsRules(text: Self.text, userAgent: "curious/1.0")
        #expect(!rules.allows("/private/secret.html"))
        #expect(rules.allows("/private/open.html"), "the longer rule wins")
        #expect(!rules.allows("/docs/manual.pdf"))
        #expect(rules.allows("/docs/manual.pdf?page=2"), "$ anchors the end")
        #expect(rules.allows("/docs/intro"))
        #expect(rules.allows("/robots.txt"))
        #expect(rules.crawlDelay == 2)
    }

    @Test func theAgentsOwnGroupReplacesTheStarGroup() {
        let rules = RobotsRules(text: Self.text, userAgent: "Sluice/0.9 (+https://example.com)")
        #expect(!rules.allows("/drafts/a.html"))
        #expect(rules.allows("/private/secret.html"), "the * group does not apply to an agent with its own")
        #expect(rules.crawlDelay == nil)
    }

    @Test func aTieGoesToAllowAndWildcardsMatchAnyRun() {
        let rules = RobotsRules(
            text: "User-agent: *\nDisallow: /a*c\nAllow: /a*c\nDisallow: /x/*/y",
            userAgent: "sluice"
        )
        #expect(rules.allows("/abc"))
        #expect(!rules.allows("/x/1/2/y/z"))
        #expect(rules.allows("/x/y"))
        #expect(RobotsRules(text: "", userAgent: "sluice").allows("/anything"))
        #expect(RobotsRules(text: "User-agent: *\nDisallow: /\n", userAgent: "sluice").allows("/") == false)
    }
}

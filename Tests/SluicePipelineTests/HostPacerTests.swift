import Testing

@testable import SluicePipeline

/// The politeness delay's reservations: one host's requests start `delay` apart, other hosts do not wait.
@Suite struct HostPacerTests {
    @Test func oneHostsTurnsAreADelayApartAndOtherHostsDoNotWait() async {
        let pacer = HostPacer()
        let delay = Duration.seconds(3_600)
        let first = await pacer.reserve(host: "a.example", every: delay)
        let second = await pacer.reserve(host: "a.example", every: delay)
        let third = await pacer.reserve(host: "a.example", every: delay)
        #expect(second - first == delay)
        #expect(third - second == delay)
        let other = await pacer.reserve(host: "b.example", every: delay)
        #expect(other <= .now, "another host's first request does not wait")
    }
}

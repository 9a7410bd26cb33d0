import Testing

@testable import SluiceEmbed

/// The choice of OpenBLAS kernels when its own detection does not know the CPU (`OpenBLASCore`).
@Suite struct OpenBLASCoreTests {
    @Test("a generic core on a CPU with AVX-512 or AVX2 is replaced by the core that fits")
    func genericCoreIsReplaced() {
        #expect(OpenBLASCore.override(current: "Prescott", cpuLevel: 2, userValue: nil) == "SkylakeX")
        #expect(OpenBLASCore.override(current: "Prescott", cpuLevel: 1, userValue: nil) == "Haswell")
        #expect(OpenBLASCore.override(current: "Sandybridge", cpuLevel: 1, userValue: nil) == "Haswell")
        #expect(OpenBLASCore.override(current: "Nehalem", cpuLevel: 2, userValue: nil) == "SkylakeX")
    }

    @Test("OpenBLAS's own wide choice, a CPU without AVX2, and a user's value are left alone")
    func otherwiseNothingChanges() {
        for core in ["Haswell", "SkylakeX", "Cooperlake", "SapphireRapids", "Zen", "Excavator", "ZEN", "haswell"] {
            #expect(OpenBLASCore.override(current: core, cpuLevel: 2, userValue: nil) == nil, "\(core)")
        }
        #expect(OpenBLASCore.override(current: "Prescott", cpuLevel: 0, userValue: nil) == nil)
        #expect(OpenBLASCore.override(current: "Prescott", cpuLevel: 2, userValue: "Prescott") == nil)
        #expect(OpenBLASCore.override(current: "Prescott", cpuLevel: 2, userValue: "") == nil)
    }
}

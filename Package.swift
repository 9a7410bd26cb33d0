// swift-tools-version: 6.0
import PackageDescription

// SwiftPM refuses a dependency required by version whose targets use unsafe flags, so a tagged release
// (what other packages resolve) carries none: there the MiniLM kernels are optimized in release builds
// only. A checkout that is not at a tag (development, CI, the scripts) optimizes them in debug builds too.
// The same switch as swift-testing's manifest.
let optimizeKernelsInDebug = Context.gitInformation?.currentTag == nil

// The README's first command (scripts/run-default.sh) builds `sluice` and its extract worker, never the server: it
// sets SLUICE_WITHOUT_SERVER=1, and the manifest then declares neither the server (`sluice-serve`) nor
// Hummingbird and swift-nio. SwiftPM resolves and checks out every dependency a manifest declares, whichever
// product is built: 26 packages (189 MB, 34 CPU-seconds from a warm cache) with them, 6 without
// (docs/notes/2026-11.md). Every other build, the tests and CI have the server.
let withServer = Context.environment["SLUICE_WITHOUT_SERVER"] != "1"

// Strict settings, once, for every Swift target (the loop follows swift-log's Package.swift).
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Sluice",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Sluice", targets: ["Sluice"]),
        .library(name: "SluiceTesting", targets: ["SluiceTesting"]),
        // For apps (iOS, macOS, Linux): Foundation only, no other Sluice module, no C library.
        .library(name: "SluiceClient", targets: ["SluiceClient"]),
        .executable(name: "sluice", targets: ["SluiceCLI"]),
        // The extract worker process alone, linked without what only `sluice` needs (it starts in half the
        // CPU); `sluice run` uses it when it is installed beside `sluice` (docs/EXTRACTORS.md).
        .executable(name: "sluice-extract-worker", targets: ["SluiceExtractWorker"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        // The lifecycle of `sluice serve` and of `sluice run` (signals, graceful shutdown).
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
    ],
    targets: [
        // C libraries: one thin system-library module each (module map + pkg-config + apt provider).
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // Poppler's core (C++) for the text layer: see Sources/CPopplerText/include/PopplerTextLayer.h.
        .systemLibrary(name: "CPopplerCore", pkgConfig: "poppler", providers: [.apt(["libpoppler-private-dev"])]),
        .systemLibrary(name: "CLMDB", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
        .systemLibrary(name: "CXXHash", pkgConfig: "libxxhash", providers: [.apt(["libxxhash-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CMalloc"),  // glibc's malloc_trim (ResidentMemoryReleaser)
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // OpenSSL's libcrypto: the RS256/ES256/HS256 checks of `sluice serve`'s bearer JWTs (docs/ACCESS.md).
        // Already loaded by libcurl; swift-crypto would compile BoringSSL a second time (~minutes per build).
        .systemLibrary(name: "CLibCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // BLAS for the MiniLM embedder (Linux; macOS uses Accelerate's identical cblas_sgemm).
        .systemLibrary(name: "COpenBLAS", pkgConfig: "openblas", providers: [.apt(["libopenblas-dev"])]),

        // Tesseract's C API, loaded at the first OCR (dlopen) rather than at every start of `sluice` and of its
        // extract workers: libtesseract brings 56 shared libraries (Sources/CTesseract/include/CTesseract.h).
        .target(name: "CTesseract", dependencies: ["CDynamicLibrary"]),
        // poppler-glib and cairo, which render PDF pages for OCR, loaded the same way at the first page rendered:
        // with glib, gio, pixman and the X11 client libraries they are 22 shared libraries that a worker reading
        // text layers never uses (Sources/CPopplerGlib/include/CPopplerGlib.h).
        .target(name: "CPopplerGlib", dependencies: ["CDynamicLibrary"]),
        // What those two share: dlopen of the first name that loads, and the look-up of the functions they declare.
        .target(name: "CDynamicLibrary", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),

        // A PDF's text layer as pdftotext extracts it, behind a C interface (poppler's text device is C++).
        // It also inflates FlateDecode streams with zlib in place of poppler's slower built-in decoder
        // (Sources/CPopplerText/include/PopplerFlateStream.h).
        .target(
            name: "CPopplerText",
            dependencies: ["CPopplerCore", "CZlib"],
            linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]
        ),

        // The MiniLM encoder's element-wise kernels, in C so that they vectorize (optimized even in debug
        // builds, except in tagged releases: see `optimizeKernelsInDebug`).
        .target(name: "CMiniLMKernels", cSettings: optimizeKernelsInDebug ? [.unsafeFlags(["-O3"])] : []),

        // The local store's approximate nearest-neighbour index: hnswlib (header-only C++, Debian's
        // libhnswlib-dev) behind a C interface; optimized in debug builds as the kernels are.
        .target(name: "CHNSW", cxxSettings: optimizeKernelsInDebug ? [.unsafeFlags(["-O3"])] : []),

        // Stage modules depend on SluiceCore (plus their own C module), never on each other.
        .target(
            name: "SluiceCore",
            dependencies: ["CXXHash", "CMalloc", .product(name: "Yams", package: "Yams")]
        ),
        // LMDB (environments, transactions, the data-file check): used by the checkpoint and the local store.
        .target(name: "SluiceLMDB", dependencies: ["SluiceCore", "CLMDB"]),
        .target(name: "SluiceState", dependencies: ["SluiceCore", "SluiceLMDB"]),
        .target(
            name: "SluiceExtract",
            dependencies: [
                "SluiceCore", "CPopplerGlib", "CPopplerText", "CTesseract",
                "CLibXML2", "CZlib",  // DOCX and HTML (libxml2), the DOCX container (zlib)
                .product(name: "Yams", package: "Yams"),  // Markdown front matter
            ]
        ),
        .target(name: "SluiceChunk", dependencies: ["SluiceCore"]),
        .target(
            name: "SluiceEmbed",
            dependencies: [
                "SluiceCore", "SluiceHTTP", "CMiniLMKernels",
                .target(name: "COpenBLAS", condition: .when(platforms: [.linux])),
            ],
            // The MiniLM forward pass unoptimized is ~100× slower, which would make the debug test suite
            // crawl (see `optimizeKernelsInDebug`).
            swiftSettings: optimizeKernelsInDebug ? [.unsafeFlags(["-O"], .when(configuration: .debug))] : []
        ),
        .target(
            name: "SluiceSinks",
            dependencies: ["SluiceCore", "SluiceLMDB", "SluiceHTTP", "CLibPQ", "CHNSW"]
        ),
        .target(name: "SluiceHTTP", dependencies: ["SluiceCore", "CCurl"]),
        .target(
            name: "SluicePipeline",
            dependencies: [
                "SluiceCore", "SluiceState", "SluiceExtract", "SluiceChunk", "SluiceEmbed", "SluiceSinks",
                "SluiceHTTP",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Sluice",
            dependencies: [
                "SluiceCore", "SluiceState", "SluiceExtract", "SluiceChunk", "SluiceEmbed", "SluiceSinks",
                "SluiceHTTP", "SluicePipeline",
            ]
        ),
        // The Swift client apps add: Foundation (URLSession) only.
        .target(name: "SluiceClient"),
        // Test support: fakes, and the loopback servers the tests start (StandIns/, Python: not compiled).
        .target(name: "SluiceTesting", dependencies: ["SluiceCore", "CZlib"], exclude: ["StandIns"]),
        // What the two command-line executables share: the pipeline options, logging, exit mapping.
        .target(
            name: "SluiceCommandLine",
            dependencies: [
                "Sluice", "CLibCrypto",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `sluice`: never the server's dependency graph (see the `sluice-serve` product). `run` and `verify`
        // run under swift-service-lifecycle, as the server does (it brings swift-async-algorithms, not NIO).
        .executableTarget(
            name: "SluiceCLI",
            dependencies: [
                "Sluice", "SluiceCommandLine", "CLibCrypto",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(name: "SluiceExtractWorker", dependencies: ["SluiceCore", "SluiceExtract"]),
        // The benchmarks (`sluice-bench`): no product, so that users of the package never get it; SwiftPM makes
        // an executable of it in this repository alone (`swift build --product sluice-bench`).
        .executableTarget(
            name: "sluice-bench",
            dependencies: [
                "SluiceCore", "SluiceEmbed", "SluiceHTTP", "SluiceSinks", "SluiceTesting",
                "SluiceExtract",  // the extract benchmark drives the PDF/OCR worker pool directly
                "SluiceChunk",  // the chunk benchmark times the chunker alone
                "SluiceCommandLine",  // `main` as sluice's
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/SluiceBench"
        ),

        .testTarget(name: "SluiceCoreTests", dependencies: ["SluiceCore", "SluiceTesting"]),
        .testTarget(name: "SluiceStateTests", dependencies: ["SluiceState"]),
        .testTarget(name: "SluiceLMDBTests", dependencies: ["SluiceLMDB", "SluiceState"]),
        .testTarget(
            name: "SluiceExtractTests",
            dependencies: ["SluiceExtract", "SluiceTesting", "CZlib"],
            exclude: ["Fixtures"]
        ),
        .testTarget(name: "SluiceChunkTests", dependencies: ["SluiceChunk", "SluiceTesting"]),
        .testTarget(
            name: "SluiceEmbedTests",
            dependencies: ["SluiceEmbed", "SluiceHTTP", "SluiceTesting"],
            exclude: ["Fixtures"]
        ),
        .testTarget(name: "SluiceSinksTests", dependencies: ["SluiceSinks", "SluiceLMDB", "SluiceTesting"]),
        .testTarget(name: "SluiceHTTPTests", dependencies: ["SluiceHTTP", "SluiceTesting"]),
        .testTarget(
            name: "SluicePipelineTests",
            dependencies: [
                "SluicePipeline", "SluiceTesting", "SluiceChunk", "SluiceExtract", "SluiceState", "SluiceLMDB",
                "SluiceEmbed",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "SluiceClientTests", dependencies: ["SluiceClient"]),
        .testTarget(
            name: "SluiceCLITests",
            dependencies: ["SluiceCore", "SluiceHTTP", "SluiceExtract", "SluiceTesting", "SluiceClient"]
        ),
    ],
    cxxLanguageStandard: .cxx17  // poppler's headers
)

if withServer {
    // The HTTP service, which `sluice serve` runs when it is installed beside `sluice`: on its own so that
    // `sluice` (the README's first command) builds without swift-nio and Hummingbird (docs/INSTALL.md).
    package.products.append(.executable(name: "sluice-serve", targets: ["SluiceServeCLI"]))
    package.dependencies += [
        // `sluice-serve` only (docs/SERVE.md says why Hummingbird and what it costs in build time).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        // Already in Hummingbird's graph; named for the bound port (NIOCore).
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    ]
    package.targets += [
        // `sluice serve`: the HTTP service over one pipeline's index (routes, OpenAPI document, metrics).
        .target(
            name: "SluiceServe",
            dependencies: [
                "SluiceCore", "SluiceState", "SluicePipeline", "CLibCrypto",
                .product(name: "Hummingbird", package: "hummingbird"),
                // The connection limit (MaximumAvailableConnections); already built for Hummingbird.
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "SluiceServeCLI",
            dependencies: [
                "Sluice", "SluiceCommandLine", "SluiceServe",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "SluiceServeTests",
            dependencies: [
                "SluiceServe", "SluiceCore", "SluiceState", "SluicePipeline", "SluiceTesting",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
}

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + strictSettings
}

// Coverage-guided fuzzing of the readers of untrusted bytes (scripts/fuzz.sh): one libFuzzer executable,
// only when SLUICE_FUZZ=1, so that ordinary builds, the test suite and tagged releases never see it or its
// unsafe flag (libFuzzer brings `main`, so the target is parsed as a library).
if Context.environment["SLUICE_FUZZ"] == "1" {
    package.targets.append(
        .executableTarget(
            name: "SluiceFuzz",
            dependencies: ["SluiceCore", "SluiceExtract", "SluiceSinks", "SluiceState", "SluiceTesting"],
            path: "Fuzz/SluiceFuzz",
            swiftSettings: strictSettings + [.unsafeFlags(["-parse-as-library"])]
        )
    )
}

import ArgumentParser
import Foundation
import Sluice
import SluiceCommandLine
import SluiceCore
import SluiceEmbed

/// `sluice`: load document corpora into vector search.
@main
struct SluiceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sluice",
        abstract:
            "Load document corpora into vector search: extract → chunk → hash/dedupe → embed → upsert, resumable.",
        discussion: """
            Exit codes: 0 all documents upserted or skipped · 1 usage or configuration error · 2 finished, \
            but documents failed in this run · 3 another run holds the lock · 4 interrupted (run again to resume) · \
            5 a provider refused to go on (quota, credentials) · 6 a dependency (store, embedder) is \
            unavailable or a disk is full: nothing was marked failed, retry later · 7 a deletion was refused by the mass-delete \
            guard (nothing deleted) · 8 a generation promote was refused (nothing changed) · 70 a bug.
            """,
        version: SluiceVersion.current,
        subcommands: [
            RunCommand.self, CheckCommand.self, StatusCommand.self, SearchCommand.self, AskCommand.self,
            EvalCommand.self,
            ServeCommand.self,
            ExportCommand.self,
            EmbedCommand.self, SinkCommand.self,
            VerifyCommand.self, GenerationCommand.self,
            // Hidden: PDF/OCR worker processes, the OpenMP and OpenBLAS diagnostics, the exit probe.
            ExtractWorkerCommand.self, OpenMPLimitCommand.self, OpenBLASCoreCommand.self,
            CryptoExitProbeCommand.self,
        ],
        defaultSubcommand: nil
    )
}

extension SluiceCommand {
    /// Parses and runs, mapping argument errors to exit code 1 (docs/DESIGN.md §7) instead of ArgumentParser's 64.
    static func main() async {
        OpenMPEnvironment.ensureSingleThreaded()
        // Not in an extract worker: its OCR would map and unmap Tesseract's large buffers on every page
        // (see Sources/SluiceExtractWorker/main.swift), and it never calls BLAS.
        if CommandLine.arguments.dropFirst().first != ExtractWorkerCommand.configuration.commandName {
            // OpenBLAS's kernels for this CPU where its own detection falls back to generic ones (may re-execute).
            OpenBLASCore.reexecuteIfUnrecognized()
            // Its threads would spin on the other cores for ~0.1 s; BLAS runs on one thread here.
            OpenBLASCore.stopThreadPool()
            ResidentMemoryReleaser.useFixedMmapThreshold()
            // Not for the server: its concurrent searches were not measured with one arena.
            if CommandLine.arguments.dropFirst().first != ServeCommand.configuration.commandName {
                ResidentMemoryReleaser.useOneArena()
            }
        }
        await parseAndRun()
    }
}

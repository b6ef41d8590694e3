import Foundation
import RoomdTesting
import Testing

/// `make install` and `make deb` (issue 25, item 8), from the debug binary the
/// tests already run: the files, the systemd unit, the package's fields, and
/// lintian where it is installed. `.serialized`: both write a staging tree of
/// the whole binary; one at a time keeps the disk and the 2 cores for the others.
@Suite(.serialized, .disabled(if: Daemon.clusterRun, "no daemon involved: once, in the single-daemon run"))
struct PackagingTests {
    func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roomd-pkg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func makeInstallLaysOutTheBinaryTemplateAndUnit() throws {
        let stage = try scratch()
        defer { try? FileManager.default.removeItem(at: stage) }
        let make = try runCommand(
            "/usr/bin/make",
            [
                "-s", "-C", Daemon.packageRoot.path, "install", "DESTDIR=\(stage.path)", "PREFIX=/usr",
                "INSTALL_BIN=\(Daemon.binary)",
            ],
            timeout: 60
        )
        #expect(make.status == 0, "\(make.err)")
        let installed = stage.appendingPathComponent("usr/bin/roomd").path
        #expect(FileManager.default.isExecutableFile(atPath: installed))
        let version = try runCommand(installed, ["--version"])
        #expect(version.out.hasPrefix("roomd "))
        let shipped = try String(contentsOfFile: Daemon.shippedConfig, encoding: .utf8)
        for template in ["etc/roomd/roles.json", "usr/share/roomd/roles.json"] {
            #expect(
                try String(contentsOf: stage.appendingPathComponent(template), encoding: .utf8) == shipped,
                "\(template) is the shipped template"
            )
        }
        let check = try runCommand(
            installed,
            ["check-config", stage.appendingPathComponent("etc/roomd/roles.json").path]
        )
        #expect(check.status == 0, "\(check.err)")
        let unit = try String(
            contentsOf: stage.appendingPathComponent("usr/lib/systemd/system/roomd.service"),
            encoding: .utf8
        )
        #expect(unit.contains("\nExecStart=/usr/bin/roomd --config /etc/roomd/roles.json --secret-file %d/secret "))
        #expect(unit.contains("\nLoadCredential=secret:/etc/roomd/secret\n") && unit.contains("\n[Install]\n"))
        #expect(!unit.contains("@"), "every placeholder is filled in")
        // A cluster node drains on stop (docs/CLUSTER.md, "Rolling restart"): systemd waits longer than the drain.
        #expect(unit.contains(" --drain-timeout 10\n") && unit.contains("\nTimeoutStopSec=20\n"))
        #expect(unit.contains("\nKillSignal=SIGTERM\n"))
    }

    @Test func makeDebBuildsAPackageDpkgAndLintianAccept() throws {
        let out = try scratch()
        defer { try? FileManager.default.removeItem(at: out) }
        var environment = ProcessInfo.processInfo.environment
        environment["BIN"] = Daemon.binary
        environment["OUT"] = out.path
        environment["COMPRESS"] = "gzip"
        environment["LEVEL"] = "1"
        let build = try runCommand(
            Daemon.packageRoot.appendingPathComponent("scripts/deb.sh").path,
            [],
            environment: environment,
            timeout: 120
        )
        #expect(build.status == 0, "\(build.err)")
        let deb = build.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(deb.hasSuffix(".deb") && FileManager.default.fileExists(atPath: deb))

        let contents = try runCommand("/usr/bin/dpkg-deb", ["--contents", deb])
        for path in [
            "./usr/bin/roomd", "./etc/roomd/roles.json", "./usr/share/roomd/roles.json",
            "./usr/lib/systemd/system/roomd.service", "./usr/share/doc/roomd/copyright",
            "./usr/share/doc/roomd/changelog.gz",
        ] {
            #expect(contents.out.contains(" \(path)\n"), "the package lacks \(path)")
        }
        #expect(contents.out.contains("-rwxr-xr-x root/root"), "files belong to root")
        let fields = try runCommand("/usr/bin/dpkg-deb", ["--field", deb, "Package", "Depends"])
        #expect(fields.out.hasPrefix("Package: roomd\n"))
        #expect(fields.out.contains("libwebsockets17") && fields.out.contains("libnats"), "\(fields.out)")
        let control = try runCommand("/usr/bin/dpkg-deb", ["--ctrl-tarfile", deb])
        #expect(control.status == 0)
        let info = try runCommand("/usr/bin/dpkg-deb", ["--info", deb])
        #expect(info.out.contains("conffiles") && info.out.contains("postinst"), "\(info.out)")

        // lintian, where installed (apt-get install lintian): no error but those of a
        // debug binary (its RUNPATH into the toolchain; zlib inside Foundation).
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/lintian") else { return }
        let lintian = try runCommand("/usr/bin/lintian", [deb], timeout: 120)
        let errors = lintian.out.split(separator: "\n").filter { $0.hasPrefix("E: ") }
        let expected = ["custom-library-search-path", "embedded-library zlib"]
        let unexpected = errors.filter { line in !expected.contains { line.contains($0) } }
        #expect(unexpected.isEmpty, "lintian: \(unexpected)")
    }
}

import Foundation
import SluiceCore
import Testing

@testable import SluicePipeline

/// Where the S3 source finds its keys, in the AWS CLI's order, and that they are never shown.
@Suite struct S3CredentialsTests {
    @Test func namedVariablesComeFirst() throws {
        var settings = PipelineConfiguration.Source.S3()
        settings.accessKeyEnv = "MY_KEY"
        settings.secretKeyEnv = "MY_SECRET"
        settings.sessionTokenEnv = "MY_TOKEN"
        let environment = [
            "MY_KEY": "k1", "MY_SECRET": "s1", "MY_TOKEN": "t1", "AWS_ACCESS_KEY_ID": "k2",
            "AWS_SECRET_ACCESS_KEY": "s2",
        ]
        let credentials = try S3Credentials.resolve(settings, environment: environment)
        #expect(credentials.accessKey == "k1" && credentials.secretKey == "s1" && credentials.sessionToken == "t1")
        #expect(!"\(credentials)".contains("s1") && !"\(credentials)".contains("k1"))
        // A named variable that is unset is an error naming it, never a fallback to other keys.
        #expect(throws: SluiceError.self) {
            try S3Credentials.resolve(settings, environment: ["MY_KEY": "k1", "MY_SECRET": "s1"])
        }
    }

    @Test func thenTheStandardVariablesThenTheSharedFile() throws {
        let settings = PipelineConfiguration.Source.S3()
        let standard = try S3Credentials.resolve(
            settings,
            environment: ["AWS_ACCESS_KEY_ID": "k2", "AWS_SECRET_ACCESS_KEY": "s2", "AWS_SESSION_TOKEN": "t2"]
        )
        #expect(standard.accessKey == "k2" && standard.sessionToken == "t2")

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "s3-credentials-\(ProcessInfo.processInfo.processIdentifier)"
        )
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("credentials")
        try """
        [default]
        aws_access_key_id = kd
        aws_secret_access_key = sd

        # a comment
        [work]
        aws_access_key_id=kw
        aws_secret_access_key = sw
        aws_session_token = tw
        """.write(to: file, atomically: true, encoding: .utf8)
        let byDefault = try S3Credentials.resolve(settings, environment: ["AWS_SHARED_CREDENTIALS_FILE": file.path])
        #expect(byDefault.accessKey == "kd" && byDefault.secretKey == "sd" && byDefault.sessionToken == nil)
        let byProfile = try S3Credentials.resolve(
            settings,
            environment: ["AWS_SHARED_CREDENTIALS_FILE": file.path, "AWS_PROFILE": "work"]
        )
        #expect(byProfile.accessKey == "kw" && byProfile.sessionToken == "tw")
        var named = settings
        named.profile = "default"
        let bySetting = try S3Credentials.resolve(
            named,
            environment: ["AWS_SHARED_CREDENTIALS_FILE": file.path, "AWS_PROFILE": "work"]
        )
        #expect(bySetting.accessKey == "kd")
        #expect(throws: SluiceError.self) {
            try S3Credentials.resolve(settings, environment: ["AWS_SHARED_CREDENTIALS_FILE": folder.path + "/none"])
        }
    }

    @Test func objectURLsAreEncodedOnce() {
        var settings = PipelineConfiguration.Source.S3()
        settings.bucket = "corpus"
        settings.endpoint = "http://127.0.0.1:9000/"
        let client = S3Client(
            settings: settings,
            credentials: S3Credentials(accessKey: "k", secretKey: "s", origin: "test")
        )
        #expect(client.url(key: "docs/a b&c+é.txt") == "http://127.0.0.1:9000/corpus/docs/a%20b%26c%2B%C3%A9.txt")
        settings.endpoint = nil
        settings.region = "eu-west-1"
        let aws = S3Client(settings: settings, credentials: S3Credentials(accessKey: "k", secretKey: "s", origin: "t"))
        #expect(aws.url(key: "x/y.pdf") == "https://corpus.s3.eu-west-1.amazonaws.com/x/y.pdf")
    }
}

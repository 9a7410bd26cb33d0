/// How libcurl signs a request with AWS Signature Version 4 (`CURLOPT_AWS_SIGV4` with `CURLOPT_USERPWD`):
/// the S3 source's requests. libcurl computes the canonical request, `x-amz-date` and `Authorization`; the
/// caller adds `x-amz-content-sha256` (libcurl 7.88 takes the payload hash from it, as S3 requires) and,
/// for temporary credentials, `x-amz-security-token`.
///
/// The secret never leaves this value except into libcurl: ``description`` shows none of it.
package struct AWSSigning: Sendable, CustomStringConvertible {
    /// `aws:amz:REGION:SERVICE`, as `CURLOPT_AWS_SIGV4` reads it.
    package var provider: String
    /// `ACCESS_KEY:SECRET`, as `CURLOPT_USERPWD` reads it.
    let userPassword: String

    package init(region: String, service: String, accessKey: String, secretKey: String) {
        provider = "aws:amz:\(region):\(service)"
        userPassword = "\(accessKey):\(secretKey)"
    }

    package var description: String { "AWSSigning(\(provider), credentials redacted)" }
}

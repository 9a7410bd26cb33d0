import Testing

@testable import SluiceServe

@Suite struct ServeMetricsTests {
    @Test func theExpositionIsPrometheusText() {
        let metrics = ServeMetrics()
        metrics.recordRequest(route: "/v1/search", status: 200, seconds: 0.003)
        metrics.recordRequest(route: "/v1/search", status: 200, seconds: 0.2)
        metrics.recordRequest(route: "/v1/search", status: 400, seconds: 20)
        metrics.recordRunStarted()
        metrics.recordRunFinished(outcome: "success")
        let text = metrics.exposition(documents: 4, vectors: 9)
        #expect(text.contains(#"sluice_http_requests_total{route="/v1/search",status="200"} 2"#))
        #expect(text.contains(#"sluice_http_requests_total{route="/v1/search",status="400"} 1"#))
        #expect(text.contains(#"sluice_http_request_duration_seconds_bucket{route="/v1/search",le="0.005"} 1"#))
        #expect(text.contains(#"sluice_http_request_duration_seconds_bucket{route="/v1/search",le="0.25"} 2"#))
        #expect(text.contains(#"sluice_http_request_duration_seconds_bucket{route="/v1/search",le="+Inf"} 3"#))
        #expect(text.contains(#"sluice_http_request_duration_seconds_count{route="/v1/search"} 3"#))
        #expect(text.contains("sluice_runs_started_total 1"))
        #expect(text.contains(#"sluice_runs_finished_total{outcome="success"} 1"#))
        #expect(text.contains("sluice_documents 4\n") && text.contains("sluice_vectors 9\n"))
        #expect(ServeMetrics.escape("a\"b\\c\n") == #"a\"b\\c\n"#)
    }

    @Test func refusedCredentialsAreCountedByReasonOnly() {
        let metrics = ServeMetrics()
        metrics.recordAuthenticationFailure(.expired)
        metrics.recordAuthenticationFailure(.expired)
        metrics.recordAuthenticationFailure(.forbidden)
        let text = metrics.exposition(documents: nil, vectors: nil)
        #expect(text.contains(#"sluice_auth_failures_total{reason="expired"} 2"#))
        #expect(text.contains(#"sluice_auth_failures_total{reason="forbidden"} 1"#))
        #expect(text.contains(#"sluice_auth_failures_total{reason="missing"} 0"#))
        #expect(text.contains(#"sluice_auth_failures_total{reason="invalid"} 0"#))
    }
}

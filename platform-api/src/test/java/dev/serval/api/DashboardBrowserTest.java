package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The dashboard in a real browser: Debian's Chromium, headless, renders {@code /ui/} while traffic flows, and the test
 * reads the page its scripts built (deployments, replicas, a non-zero request rate, a drawn chart) and keeps a
 * screenshot in {@code target/dashboard.png}. {@code bin/test} installs Chromium when it is missing.
 */
@QuarkusTest
class DashboardBrowserTest {

    private static final String BODY = "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],"
            + "\"data\":[\"what the dashboard shows\"]}]}";

    private static final String SECOND = "dash-browser-echo";

    @TestHTTPResource("/ui/")
    URL page;

    @Test
    void aBrowserShowsTheDeploymentItsReplicasAndItsTraffic() throws Exception {
        Serving.awaitReady();
        Path chromium = chromium();
        // A second deployment, created at run time: the page shows it beside the default one.
        given().contentType("application/json").body("{\"model\":\"noop\",\"num_replicas\":2}")
                .put("/api/deployments/" + SECOND).then().statusCode(201);
        Serving.awaitModelReady(SECOND);
        String url = "http://127.0.0.1:" + page.getPort() + "/ui/";
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger answered = new AtomicInteger();
        Thread traffic = Thread.ofPlatform().name("dashboard-traffic").start(() -> send(url, stop, answered));
        String dom;
        try {
            // The page shows the latest sample: wait until the sampler has one with this traffic in it.
            Serving.await("a sample with requests in it", () -> given().get("/ui/api/dashboard"), response -> {
                JsonNode ok = DashboardTest.deployment(DashboardTest.json(response), Serving.MODEL)
                        .at("/history/requestsPerSecond/ok");
                return ok.size() > 0 && ok.get(ok.size() - 1).asDouble() > 0;
            });
            // The card shows the latest sample's rate. Starting a headless browser takes both of this machine's
            // cores for a moment, so a sample may hold no answered request; read the page again, a few times at most,
            // while the traffic goes on.
            dom = run(chromium, "--dump-dom", url);
            for (int attempt = 1; attempt < 4 && shownRate(dom) <= 0; attempt++) {
                dom = run(chromium, "--dump-dom", url);
            }
            Path screenshot = Path.of("target", "dashboard.png").toAbsolutePath();
            Files.deleteIfExists(screenshot);
            run(chromium, "--screenshot=" + screenshot, url);
            assertTrue(Files.size(screenshot) > 10_000, "a screenshot of the page in " + screenshot);
        } finally {
            stop.set(true);
            traffic.join();
            given().delete("/api/deployments/" + SECOND).then().statusCode(200);
        }
        assertTrue(answered.get() > 0, "the traffic was answered");

        assertTrue(dom.matches("(?s).*<body[^>]*data-updated=\"\\d+\".*"), "the page rendered data from Serval");
        assertEquals("live", text(dom, "id=\"server-live\""));
        assertEquals("ready", text(dom, "id=\"server-ready\""));
        String card = card(dom, Serving.MODEL);
        assertEquals(Serving.MODEL, text(card, "data-field=\"name\""));
        assertEquals("READY", text(card, "data-field=\"state\""));
        assertEquals("1", text(card, "data-field=\"replicas-running\""));
        assertEquals("0", text(card, "data-field=\"replicas-starting\""));
        assertEquals("1", text(card, "data-field=\"replicas-desired\""));
        double rate = shownRate(dom);
        assertTrue(rate > 0, "requests per second shown: " + rate);
        assertTrue(Double.parseDouble(text(card, "data-field=\"p99-total\"")) > 0, "a p99 is shown");
        String second = card(dom, SECOND);
        assertEquals("2", text(second, "data-field=\"replicas-running\""));
        assertEquals("noop", text(second, "data-field=\"kind\""));
        Matcher okSeries = Pattern.compile("<path[^>]*data-series=\"ok\"[^>]*>").matcher(card);
        assertTrue(okSeries.find(), "the requests chart has an ok series");
        assertTrue(okSeries.group().matches(".*\\sd=\"M[^\"]+\".*"), "the ok series is drawn: " + okSeries.group());
    }

    /** Sends one request after another until {@code stop}, so that every sample the page shows has traffic. */
    private static void send(String url, AtomicBoolean stop, AtomicInteger answered) {
        URI infer = URI.create(url.replace("/ui/", Serving.INFER));
        try (HttpClient client = HttpClient.newHttpClient()) {
            while (!stop.get()) {
                HttpResponse<Void> response = client.send(HttpRequest.newBuilder(infer)
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(BODY)).build(), HttpResponse.BodyHandlers.discarding());
                if (response.statusCode() == 200) {
                    answered.incrementAndGet();
                }
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Debian's Chromium, which bin/test installs; the test fails saying so when it is missing. */
    static Path chromium() {
        for (String candidate : List.of("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")) {
            if (Files.isExecutable(Path.of(candidate))) {
                return Path.of(candidate);
            }
        }
        return fail("DashboardBrowserTest needs Chromium (/usr/bin/chromium): run bin/test, which installs Debian's "
                + "chromium as root, or: sudo apt-get install -y --no-install-recommends chromium");
    }

    /** Runs headless Chromium on {@code url} with {@code action} and returns what it printed. */
    private static String run(Path chromium, String action, String url) throws IOException, InterruptedException {
        Path profile = Files.createTempDirectory("serval-chromium");
        List<String> command = new ArrayList<>(List.of(chromium.toString(), "--headless", "--no-sandbox",
                "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                "--user-data-dir=" + profile, "--window-size=1280,1100",
                // Virtual time: the page's timers run at once, and the browser waits for its fetches.
                "--virtual-time-budget=5000", action, url));
        Path output = Files.createTempFile("serval-chromium", ".out");
        Process process = new ProcessBuilder(command).redirectOutput(output.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try {
            if (!process.waitFor(90, TimeUnit.SECONDS)) {
                fail("Chromium did not finish " + action + " within 90 s");
            }
            assertEquals(0, process.exitValue(), "Chromium's exit status for " + action);
            return Files.readString(output, StandardCharsets.UTF_8);
        } finally {
            process.destroyForcibly();
            Files.deleteIfExists(output);
            try (var files = Files.walk(profile)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    /** The card of deployment {@code name}: from its section to the next one. */
    /** The requests per second answered OK the default deployment's card shows. */
    private static double shownRate(String dom) {
        return Double.parseDouble(text(card(dom, Serving.MODEL), "data-field=\"rps-ok\""));
    }

    private static String card(String dom, String name) {
        int start = dom.indexOf("data-deployment=\"" + name + "\"");
        assertTrue(start >= 0, "the page shows deployment " + name);
        int end = dom.indexOf("<section", start);
        return dom.substring(start, end < 0 ? dom.length() : end);
    }

    /** The text of the first element whose start tag has {@code attribute}. */
    private static String text(String html, String attribute) {
        Matcher matcher = Pattern.compile("<[a-z0-9]+[^>]*" + Pattern.quote(attribute) + "[^>]*>([^<]*)<")
                .matcher(html);
        assertTrue(matcher.find(), "the page has an element with " + attribute);
        return matcher.group(1).trim();
    }
}

package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** With no token configured, Serval makes one, writes it where only its user can read it, and requires it. */
@QuarkusTest
@TestProfile(SecureByDefaultTest.Profile.class)
class SecureByDefaultTest {

    static final Path TOKEN_FILE = Path.of("target", "secure-by-default", "api-token");

    /** The shipped defaults for the management API: auth on, no token set. */
    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            TestRepository.install();
            try {
                Files.deleteIfExists(TOKEN_FILE);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return Map.of("serval.api.auth-enabled", "true", "serval.api.token-file", TOKEN_FILE.toString());
        }
    }

    @Test
    void generatesATokenReadableOnlyByItsUserAndRequiresIt() throws IOException {
        assertTrue(Files.isRegularFile(TOKEN_FILE), "no token file at " + TOKEN_FILE);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(TOKEN_FILE)));
        String token = Files.readString(TOKEN_FILE, StandardCharsets.UTF_8).trim();
        assertTrue(token.length() >= 40, "a 256-bit token in base64url, not '" + token + "'");

        given().get("/api/deployments").then().statusCode(401);
        given().header("Authorization", "Bearer " + token).get("/api/deployments").then().statusCode(200);
        given().header("Authorization", "bearer " + token).get("/api/status").then().statusCode(200);
        given().post("/v2/repository/index").then().statusCode(401);
    }
}

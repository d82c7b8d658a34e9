package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasSize;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code dimensions} on a model that declares {@code matryoshka_dimensions} ({@code matryoshka}: the tiny encoder's
 * 16-wide vectors, cut to 8 or 4): the vector cut to that width and normalised again, over OpenAI and TEI; any other
 * width refused naming the ones there are.
 */
@QuarkusTest
@TestProfile(ModelKindsProfile.class)
class MatryoshkaHttpTest {

    @BeforeEach
    void ready() {
        Serving.awaitModelReady("matryoshka");
    }

    private static float[] openAi(String dimensions) {
        List<Float> vector = given().contentType("application/json").body("{\"model\":\"matryoshka\",\"input\":"
                + "\"a cut vector\"" + dimensions + "}").post("/v1/embeddings").then().statusCode(200)
                .extract().jsonPath().getList("data[0].embedding", Float.class);
        return Serving.floats(vector);
    }

    @Test
    void aDeclaredWidthIsTheFullVectorCutAndNormalised() {
        float[] full = openAi("");
        assertEquals(16, full.length);
        for (int width : new int[] {8, 4}) {
            float[] cut = openAi(",\"dimensions\":" + width);
            double norm = 0;
            for (int i = 0; i < width; i++) {
                norm += (double) full[i] * full[i];
            }
            float[] expected = new float[width];
            for (int i = 0; i < width; i++) {
                expected[i] = (float) (full[i] / Math.sqrt(norm));
            }
            assertArrayEquals(expected, cut, 1e-6f, "width " + width);
        }
        given().contentType("application/json").body("{\"inputs\":\"a cut vector\",\"dimensions\":4}")
                .post("/tei/matryoshka/embed").then().statusCode(200).body("[0]", hasSize(4));
    }

    @Test
    void anUndeclaredWidthIsRefusedNamingTheDeclaredOnes() {
        given().contentType("application/json").body("{\"model\":\"matryoshka\",\"input\":\"x\",\"dimensions\":5}")
                .post("/v1/embeddings").then().statusCode(400)
                .body("error.message", containsString("it may be cut to [8, 4]"))
                .body("error.param", org.hamcrest.Matchers.equalTo("dimensions"));
        given().contentType("application/json").body("{\"model\":\"" + Serving.MODEL + "\",\"input\":\"x\","
                + "\"dimensions\":128}").post("/v1/embeddings").then().statusCode(400)
                .body("error.message", containsString("declares no matryoshka_dimensions"));
    }

    @Test
    void refusesInt8ForAModelThatDeclaresNoQuantisationRanges() {
        for (String format : new String[] {"int8", "uint8"}) {
            given().contentType("application/json").body("{\"model\":\"matryoshka\",\"input\":\"x\","
                    + "\"encoding_format\":\"" + format + "\"}").post("/v1/embeddings").then().statusCode(400)
                    .body("error.param", org.hamcrest.Matchers.equalTo("encoding_format"))
                    .body("error.message", containsString("'" + format + "' needs quantisation ranges, which model "
                            + "'matryoshka' does not declare (a model.yaml names them in 'quantization_ranges'"));
        }
    }
}

package dev.serval.bench.model;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import dev.serval.bench.BenchmarkBase;
import dev.serval.model.ModelFiles;
import dev.serval.model.text.LeanEncoding;
import java.io.IOException;
import java.nio.file.Path;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Short texts tokenised per second by the default model's tokenizer (256-token limit, special tokens, no padding),
 * the two ways Serval could call it, in one run: {@link #djlEncoding}, DJL's {@code HuggingFaceTokenizer.encode}
 * (which also copies out every token as a string, its character span, word, sequence and special-token ids), and
 * {@link #leanEncoding}, what Serval's predictors call ({@link LeanEncoding}: the same native encode, reading only
 * ids, type ids and attention mask). Same texts as {@link EmbeddingBenchmark}. Run from the repository root (about
 * 80 seconds):
 * <pre>{@code
 * ./mvnw -q -B -DskipTests package -pl platform-bench -am
 * java -jar platform-bench/target/benchmarks.jar TokenizerBenchmark
 * }</pre>
 */
public class TokenizerBenchmark extends BenchmarkBase {

    @Benchmark
    public Encoding djlEncoding(Tokenizer tokenizer, EmbeddingBenchmark.Cursor cursor) {
        return tokenizer.tokenizer.encode(cursor.next());
    }

    @Benchmark
    public Encoding leanEncoding(Tokenizer tokenizer, EmbeddingBenchmark.Cursor cursor) {
        return LeanEncoding.of(tokenizer.tokenizer, cursor.next());
    }

    /** The default model's tokenizer as Serval builds it. */
    @State(Scope.Benchmark)
    public static class Tokenizer {

        HuggingFaceTokenizer tokenizer;

        @Setup(Level.Trial)
        public void open() throws IOException {
            Path directory = Path.of(System.getProperty("java.io.tmpdir"), "serval-bench-models");
            tokenizer = HuggingFaceTokenizer.builder()
                    .optTokenizerPath(ModelFiles.extract(TokenizerBenchmark.class.getClassLoader(),
                            "all-minilm-l6-v2-q-tokenizer.json", directory))
                    .optAddSpecialTokens(true).optTruncation(true).optMaxLength(256).optPadding(false).build();
        }

        @TearDown(Level.Trial)
        public void close() {
            tokenizer.close();
        }
    }
}

package dev.serval.model.onnx;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The symbol versions of a 64-bit little-endian ELF shared library (x86-64, aarch64): the versions it defines
 * ({@code .gnu.version_d}) and the versions it needs from each of its dependencies ({@code .gnu.version_r}), and a
 * copy of it needing another version of a dependency. This is what {@link OnnxRuntimeLibrary} needs to run ONNX
 * Runtime Java's JNI binding over a newer {@code libonnxruntime.so}: the binding asks for {@code OrtGetApiBase} at
 * the version it was built with ({@code VERS_1.29.0}), which a newer runtime no longer names although it serves
 * that API version.
 *
 * <p>Everything read is bounds-checked against the file: a truncated or foreign file is an {@link IOException} naming
 * what is wrong, never an index out of range.
 */
final class ElfVersions {

    private static final int SHT_GNU_VERDEF = 0x6ffffffd;
    private static final int SHT_GNU_VERNEED = 0x6ffffffe;
    private static final int VER_FLG_BASE = 0x1;
    /** At most this many version entries are read from one section (libraries have a handful). */
    private static final int MAX_ENTRIES = 4096;

    /** A version a library needs from {@code file}; {@code nameOffset} is where its name starts in the file. */
    record Needed(String file, String version, int nameOffset, int auxOffset) {
    }

    private final ByteBuffer elf;
    private final int length;
    private final List<String> defined = new ArrayList<>();
    private final List<Needed> needed = new ArrayList<>();

    private ElfVersions(ByteBuffer file) throws IOException {
        this.elf = file.duplicate().order(ByteOrder.LITTLE_ENDIAN).position(0);
        this.length = elf.limit();
        if (length < 64 || elf.get(0) != 0x7f || elf.get(1) != 'E' || elf.get(2) != 'L' || elf.get(3) != 'F') {
            throw new IOException("not an ELF file");
        }
        if (elf.get(4) != 2 || elf.get(5) != 1) {
            throw new IOException("not a 64-bit little-endian ELF file");
        }
        long sectionTable = elf.getLong(0x28);
        int entrySize = Short.toUnsignedInt(elf.getShort(0x3a));
        int sections = Short.toUnsignedInt(elf.getShort(0x3c));
        if (entrySize < 64) {
            throw new IOException("ELF section headers of " + entrySize + " bytes");
        }
        check(sectionTable, (long) entrySize * sections, "section headers");
        for (int i = 0; i < sections; i++) {
            int header = (int) sectionTable + i * entrySize;
            int type = elf.getInt(header + 4);
            if (type != SHT_GNU_VERDEF && type != SHT_GNU_VERNEED) {
                continue;
            }
            long offset = elf.getLong(header + 0x18);
            long size = elf.getLong(header + 0x20);
            int link = elf.getInt(header + 0x28);
            int count = elf.getInt(header + 0x2c);
            check(offset, size, "version section");
            if (link < 0 || link >= sections) {
                throw new IOException("version section linked to section " + link + " of " + sections);
            }
            int strings = (int) sectionTable + link * entrySize;
            Strings table = new Strings(elf.getLong(strings + 0x18), elf.getLong(strings + 0x20));
            if (count < 0 || count > MAX_ENTRIES) {
                throw new IOException("version section with " + count + " entries");
            }
            if (type == SHT_GNU_VERDEF) {
                readDefinitions((int) offset, (int) size, count, table);
            } else {
                readNeeds((int) offset, (int) size, count, table);
            }
        }
    }

    /** Reads {@code file} (from position 0 to its limit) as an ELF shared library; the buffer is not modified. */
    static ElfVersions read(ByteBuffer file) throws IOException {
        return new ElfVersions(file);
    }

    /** The versions this library defines, without the base entry (its soname): e.g. {@code [VERS_1.32.0]}. */
    List<String> defined() {
        return List.copyOf(defined);
    }

    /** The versions this library needs from its dependencies. */
    List<Needed> needed() {
        return List.copyOf(needed);
    }

    /**
     * A copy of this library that needs {@code replacement} wherever it needed {@code version} from {@code file}:
     * the name is rewritten in place and its hash recomputed, so {@code replacement} must be as long as
     * {@code version}.
     *
     * @throws IOException when the library does not need that version or the names differ in length
     */
    byte[] withNeeded(String file, String version, String replacement) throws IOException {
        byte[] name = replacement.getBytes(StandardCharsets.US_ASCII);
        if (name.length != version.length()) {
            throw new IOException("cannot rename needed version " + version + " to " + replacement
                    + " in place: the names differ in length");
        }
        byte[] copy = new byte[length];
        elf.get(0, copy);
        ByteBuffer out = ByteBuffer.wrap(copy).order(ByteOrder.LITTLE_ENDIAN);
        boolean found = false;
        for (Needed need : needed) {
            if (need.file().equals(file) && need.version().equals(version)) {
                System.arraycopy(name, 0, copy, need.nameOffset(), name.length);
                out.putInt(need.auxOffset(), (int) hash(name));
                found = true;
            }
        }
        if (!found) {
            throw new IOException("the library does not need version " + version + " of " + file);
        }
        return copy;
    }

    /** The System V ELF hash of a name, as {@code vd_hash} and {@code vna_hash} hold it. */
    static long hash(byte[] name) {
        long h = 0;
        for (byte b : name) {
            h = ((h << 4) + (b & 0xff)) & 0xffffffffL;
            long g = h & 0xf0000000L;
            if (g != 0) {
                h ^= g >>> 24;
            }
            h &= ~g & 0xffffffffL;
        }
        return h;
    }

    private void readDefinitions(int start, int size, int count, Strings strings) throws IOException {
        int at = start;
        for (int i = 0; i < count; i++) {
            check(at, 20, "version definition");
            int flags = Short.toUnsignedInt(elf.getShort(at + 2));
            int aux = elf.getInt(at + 12);
            int next = elf.getInt(at + 16);
            check((long) at + aux, 8, "version definition name");
            if ((flags & VER_FLG_BASE) == 0) {
                defined.add(strings.at(elf.getInt(at + aux)));
            }
            if (next == 0) {
                break;
            }
            at = advance(at, next, start, size);
        }
    }

    private void readNeeds(int start, int size, int count, Strings strings) throws IOException {
        int at = start;
        for (int i = 0; i < count; i++) {
            check(at, 16, "version need");
            int versions = Short.toUnsignedInt(elf.getShort(at + 2));
            String file = strings.at(elf.getInt(at + 4));
            int aux = at;
            int nextAux = elf.getInt(at + 8);
            for (int k = 0; k < versions && k < MAX_ENTRIES; k++) {
                aux = advance(aux, nextAux, start, size);
                check(aux, 16, "needed version");
                int name = elf.getInt(aux + 8);
                needed.add(new Needed(file, strings.at(name), strings.offset(name), aux));
                nextAux = elf.getInt(aux + 12);
                if (nextAux == 0) {
                    break;
                }
            }
            int next = elf.getInt(at + 12);
            if (next == 0) {
                break;
            }
            at = advance(at, next, start, size);
        }
    }

    /** {@code from + step}, which must stay inside the section that starts at {@code start}. */
    private static int advance(int from, int step, int start, int size) throws IOException {
        long to = (long) from + Integer.toUnsignedLong(step);
        if (step <= 0 || to >= (long) start + size) {
            throw new IOException("version entry at " + from + " points outside its section");
        }
        return (int) to;
    }

    private void check(long offset, long length, String what) throws IOException {
        if (offset < 0 || length < 0 || offset + length > this.length || offset + length < offset) {
            throw new IOException("ELF " + what + " at " + offset + " (+" + length + ") outside the file of "
                    + this.length + " bytes");
        }
    }

    /** A string table: NUL-terminated names at offsets into {@code [start, start + size)}. */
    private final class Strings {
        private final int start;
        private final int size;

        Strings(long start, long size) throws IOException {
            check(start, size, "string table");
            this.start = (int) start;
            this.size = (int) size;
        }

        int offset(int index) throws IOException {
            if (index < 0 || index >= size) {
                throw new IOException("string " + index + " outside a string table of " + size + " bytes");
            }
            return start + index;
        }

        String at(int index) throws IOException {
            int from = offset(index);
            int end = from;
            while (end < start + size && elf.get(end) != 0) {
                end++;
            }
            if (end == start + size) {
                throw new IOException("unterminated string at " + index + " in a string table");
            }
            byte[] name = new byte[end - from];
            elf.get(from, name);
            return new String(name, StandardCharsets.US_ASCII);
        }
    }
}

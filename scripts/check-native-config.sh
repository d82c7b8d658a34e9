#!/usr/bin/env bash
# Checks Serval's native-image configuration (platform-api/src/main/resources/META-INF/native-image) against the
# jars it is for, without GraalVM: every class named in jni-config.json exists in the fast-jar's libraries, every
# Java class the bundled JNI libraries (ONNX Runtime, the tokenizers) look up by name is registered for JNI, and
# every resource pattern matches an entry of some jar (libraries or Serval's own). It cannot tell whether native-image
# succeeds (docs/native.md).
# Usage: scripts/check-native-config.sh     (after ./mvnw package; reads platform-api/target/quarkus-app/lib)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
exec python3 - "$ROOT" <<'PY'
import json, re, sys, zipfile, pathlib
root = pathlib.Path(sys.argv[1])
cfg = root / "platform-api/src/main/resources/META-INF/native-image/dev.serval/platform-api"
libs = sorted((root / "platform-api/target/quarkus-app/lib").rglob("*.jar"))
apps = sorted((root / "platform-api/target/quarkus-app/app").glob("*.jar"))  # Serval's own classes and resources
if not libs:
    sys.exit("no fast-jar libraries under platform-api/target/quarkus-app/lib: run ./mvnw package first")
entries, natives = set(), {}
for jar in libs + apps:
    with zipfile.ZipFile(jar) as z:
        for name in z.namelist():
            entries.add(name)
            if re.search(r"linux-(x64|x86_64)/.*(onnxruntime4j_jni|tokenizers)\.so$", name):
                natives[f"{jar.name}!{name}"] = z.read(name)
problems = []
jni = json.loads((cfg / "jni-config.json").read_text())
registered = {entry["name"] for entry in jni}
for name in sorted(registered):
    if not name.startswith("java.") and name.replace(".", "/") + ".class" not in entries:
        problems.append(f"jni-config.json: class {name} is in no jar")
if len(natives) < 2:
    problems.append(f"expected the ONNX Runtime JNI and tokenizers libraries, found {sorted(natives)}")
# The libraries' strings are not always NUL-separated (Rust concatenates them), so a lookup is the longest jar
# class (or java.lang exception/String) that starts where a package prefix occurs in the binary.
classes = sorted((e[:-6] for e in entries if e.endswith(".class") and e.startswith(("ai/djl/", "ai/onnxruntime/"))),
                 key=len, reverse=True)
for where, data in natives.items():
    found = set()
    for m in re.finditer(rb"ai/(?:djl|onnxruntime)/", data):
        tail = data[m.start():m.start() + 200]
        hit = next((c for c in classes if tail.startswith(c.encode())), None)
        if hit:
            found.add(hit.replace("/", "."))
    for m in re.finditer(rb"java/lang/[A-Z][A-Za-z]*?(?:Exception|Error|String)", data):
        found.add(m.group().decode().replace("/", "."))
    for name in sorted(found - registered):
        problems.append(f"{where} looks up {name}, which jni-config.json does not register")
resources = json.loads((cfg / "resource-config.json").read_text())["resources"]["includes"]
def java_regex(pattern):  # GraalVM patterns are Java regexes: \Q...\E quotes literally
    return re.sub(r"\\Q(.*?)\\E", lambda m: re.escape(m.group(1)), pattern)
for item in resources:
    if not any(re.fullmatch(java_regex(item["pattern"]), e) for e in entries):
        problems.append(f"resource-config.json: pattern {item['pattern']} matches no jar entry")
props = (cfg / "native-image.properties").read_text()
for ref in re.findall(r"\$\{\.\}/([\w.-]+)", props):
    if not (cfg / ref).is_file():
        problems.append(f"native-image.properties names {ref}, which does not exist")
for p in problems:
    print("native config:", p, file=sys.stderr)
if problems:
    sys.exit(1)
print(f"native config: {len(registered)} JNI classes, {len(resources)} resource patterns, "
      f"{len(natives)} JNI libraries checked against {len(libs)} jars: consistent")
PY

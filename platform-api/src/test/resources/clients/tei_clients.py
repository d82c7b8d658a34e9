"""Calls a running Serval with TEI's own client libraries, unmodified, and prints what they answered as one JSON object.

    python tei_clients.py http://127.0.0.1:8081 all-minilm-l6-v2 "first text" "second text"

Keys: hf_feature_extraction (huggingface_hub's InferenceClient given the deployment's TEI URL, one text at a time),
hf_sentence_similarity (the first text against the others), llamaindex (LlamaIndex's TextEmbeddingsInference at the
root URL, every text in one batch).
"""
import json
import sys

import numpy as np
from huggingface_hub import InferenceClient
from llama_index.embeddings.text_embeddings_inference import TextEmbeddingsInference

base, deployment, texts = sys.argv[1], sys.argv[2], sys.argv[3:]
client = InferenceClient(model=f"{base}/tei/{deployment}")
out = {
    "hf_feature_extraction": [np.asarray(client.feature_extraction(t)).reshape(-1).tolist() for t in texts],
    "hf_sentence_similarity": [float(s) for s in client.sentence_similarity(texts[0], texts[1:])],
    "llamaindex": TextEmbeddingsInference(model_name=deployment, base_url=base, timeout=30,
                                          embed_batch_size=len(texts)).get_text_embedding_batch(texts),
}
print(json.dumps(out))

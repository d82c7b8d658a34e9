"""Calls a running Serval's TEI URL of a text classifier with huggingface_hub's InferenceClient, unmodified, and prints
what text_classification answered (each label and score, best first) as JSON.

    python classify_clients.py http://127.0.0.1:8081 classifier TEXT
"""
import json
import sys

from huggingface_hub import InferenceClient

base, deployment, text = sys.argv[1], sys.argv[2], sys.argv[3]
client = InferenceClient(model=f"{base}/tei/{deployment}")
print(json.dumps([{"label": e.label, "score": e.score} for e in client.text_classification(text)]))

"""Calls a running Serval's rerank routes with other servers' client libraries, unmodified, and prints what they
answered as one JSON object.

    python rerank_clients.py http://127.0.0.1:8081 reranker QUERY DOCUMENT...

Key: cohere (Cohere's SDK, ClientV2.rerank with base_url: POST /v2/rerank), each result's index and relevance_score,
best first.
"""
import json
import sys

import cohere

base, deployment, query, documents = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
co = cohere.ClientV2(api_key="unused", base_url=base)
reranked = co.rerank(model=deployment, query=query, documents=documents, top_n=len(documents))
out = {
    "cohere": [{"index": r.index, "relevance_score": r.relevance_score} for r in reranked.results],
}
print(json.dumps(out))

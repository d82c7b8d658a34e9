/**
 * The text kinds ({@link dev.serval.model.text.TextModels}): a Hugging Face tokenizer in front of an ONNX graph, one
 * result per text, batch invariance decided and probed at load, long texts truncated or chunked. Everything else here
 * is package-private: the models, their heads, the DJL translator and the OIP mapping of classifications.
 */
package dev.serval.model.text;

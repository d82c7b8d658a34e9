/**
 * ONNX models through DJL's ONNX Runtime engine: reading a graph's interface and operators without loading it
 * ({@link dev.serval.model.onnx.OnnxGraph}), a descriptor's checked session options
 * ({@link dev.serval.model.onnx.OnnxOptions}), opening sessions the same way for every kind
 * ({@link dev.serval.model.onnx.OnnxSessions}, {@link dev.serval.model.onnx.DjlSettings}), and the {@code tensor} kind
 * ({@link dev.serval.model.onnx.TensorModels}).
 */
package dev.serval.model.onnx;

/**
 * What a request is, and how it meets a model: {@link dev.serval.request.InferenceRequest} (its tensors, the outputs
 * it wants, and its {@link dev.serval.request.CallContext}: who it is and until when it may run), and
 * {@link dev.serval.request.TensorIO}, how a model kind maps a request's tensors to its inputs and its outputs back
 * ({@link dev.serval.request.TextIO}, {@link dev.serval.request.WholeRequestIO}, and
 * {@link dev.serval.request.InvocationIO}, whose {@link dev.serval.request.Invocation} carries the context on to the
 * deployments a composite model calls). Above {@code tensor} (the data) and {@code error}, below every layer a request
 * crosses (the model kinds, the deployments, the composite models, the edge), so that each names it without reaching
 * up.
 */
package dev.serval.request;

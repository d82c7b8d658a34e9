/**
 * Models: what the engine serves and how a model version loads.
 *
 * <p>The model SPI ({@link dev.serval.model.Model}, {@link dev.serval.model.Predictor}, their signatures, results and
 * {@link dev.serval.model.BatchingDecision}) is what replicas and predictor pools run. The model kinds
 * ({@link dev.serval.model.ModelKind}), a version's descriptor ({@link dev.serval.model.ModelDescriptor}, the record of
 * a {@code model.yaml}; reading the file is the repository's, in platform-api) and the deployment's
 * {@link dev.serval.model.LoadOptions} meet in {@link dev.serval.model.ModelCatalog}, the one place that turns a kind
 * into a loaded model.
 *
 * <p>The composite kinds (pipeline, java) are described here ({@link dev.serval.model.Composite},
 * {@link dev.serval.model.PipelineStep}, parts of the descriptor) but load through a
 * {@link dev.serval.model.CompositeLoader} the catalog's caller hands in: calling deployments is
 * {@code dev.serval.compose}'s, which sits above the deployments and so above this package, which never names it.
 *
 * <p>The kinds' implementations live below: {@code model.onnx} (ONNX graphs, ONNX Runtime sessions, the tensor kind)
 * and {@code model.text} (tokenised text kinds), the only packages that import DJL. Their classes are package-private
 * but for the few types the catalog and the text kinds need.
 */
package dev.serval.model;

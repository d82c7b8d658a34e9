/**
 * What every request carries besides its tensors: who it is and until when it may run
 * ({@link dev.serval.request.CallContext}). The lowest package of the engine, on the JDK alone, so that every layer a
 * request crosses (the tensor mappings, the deployments, the composite models that call further deployments, the edge)
 * can name it without reaching up.
 */
package dev.serval.request;

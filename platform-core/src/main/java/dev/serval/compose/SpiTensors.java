package dev.serval.compose;

import dev.serval.spi.DataType;
import dev.serval.spi.TensorSpec;
import dev.serval.model.TensorSignature;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Serval's tensors as the handler SPI's, and back: the name, datatype and shape are rewrapped and the element arrays
 * shared, never copied (both sides promise not to modify them). Both enums name the same OIP datatypes.
 */
final class SpiTensors {

    private static final DataType[] TO_SPI = new DataType[dev.serval.tensor.DataType.values().length];
    private static final dev.serval.tensor.DataType[] FROM_SPI =
            new dev.serval.tensor.DataType[DataType.values().length];

    static {
        for (dev.serval.tensor.DataType type : dev.serval.tensor.DataType.values()) {
            DataType spi = DataType.valueOf(type.name());
            TO_SPI[type.ordinal()] = spi;
            FROM_SPI[spi.ordinal()] = type;
        }
    }

    private SpiTensors() {
    }

    static List<dev.serval.spi.Tensor> toSpi(Tensors tensors) {
        List<dev.serval.spi.Tensor> converted = new ArrayList<>(tensors.size());
        for (Tensor tensor : tensors.tensors()) {
            converted.add(new dev.serval.spi.Tensor(tensor.name(), TO_SPI[tensor.datatype().ordinal()], tensor.shape(),
                    tensor.data()));
        }
        return converted;
    }

    /**
     * @param what names the tensors in errors, for example "handler 'custom' output"
     * @throws IllegalStateException when the list is null, holds null, or repeats a name
     */
    static Tensors fromSpi(List<dev.serval.spi.Tensor> tensors, String what) {
        if (tensors == null) {
            throw new IllegalStateException(what + "s are null");
        }
        List<Tensor> converted = new ArrayList<>(tensors.size());
        for (dev.serval.spi.Tensor tensor : tensors) {
            if (tensor == null) {
                throw new IllegalStateException(what + "s hold a null tensor");
            }
            converted.add(new Tensor(tensor.name(), FROM_SPI[tensor.datatype().ordinal()], tensor.shape(),
                    tensor.data()));
        }
        try {
            return new Tensors(converted);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(what + ": " + e.getMessage());
        }
    }

    static List<TensorSignature> signatures(List<TensorSpec> specs) {
        return specs.stream().map(spec -> new TensorSignature(spec.name(), spec.datatype().name(),
                Arrays.stream(spec.shape()).boxed().toList())).toList();
    }
}

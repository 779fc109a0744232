"""PyTorch reference of slotserve's models (DESIGN §2, §3): the executable specification the
C++ engine is checked against, plus the converter into the model-directory format."""

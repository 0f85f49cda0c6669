"""Plans a PyTorch user can run: apply a placer.result/v1 plan to the model it was made from.

`plan` reads a result document (torch-free); `torch_module` builds the placed torch.fx
GraphModule from the importer's capture; `torch_file` writes it as a self-contained Python
file; `measure` runs it and compares the measured step time with the prediction.
"""

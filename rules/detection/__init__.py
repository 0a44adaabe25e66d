"""ROC10x: ``torch.version.cuda`` as a GPU test or parsed; ROC11x: device gates (capability,
name, arch list, ``gcnArchName``) that misfire on AMD GPUs. One rule per module."""

"""A diffusers training-and-sampling smoke test for ``migrate verify`` (copied into a checkout).

It uses diffusers' own ``UNet2DModel``, ``DDPMScheduler`` and ``DDPMPipeline``: a few denoising
training steps (the loss of examples/unconditional_image_generation/train_unconditional.py) on a
fixed random batch, then sampling; it prints ``k/N loss: X``, per-step times and image statistics.
"""

import os
import time

import torch
import torch.nn.functional as F
from diffusers import DDPMPipeline, DDPMScheduler, UNet2DModel


def main() -> None:
    steps = int(os.environ.get("SMOKE_STEPS", "10"))
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    unet = UNet2DModel(
        sample_size=64,
        in_channels=3,
        out_channels=3,
        layers_per_block=2,
        block_out_channels=(64, 128, 256, 256),
        down_block_types=("DownBlock2D", "DownBlock2D", "AttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "AttnUpBlock2D", "UpBlock2D", "UpBlock2D"),
    ).to(device)
    scheduler = DDPMScheduler(num_train_timesteps=1000)
    optimizer = torch.optim.AdamW(unet.parameters(), lr=1e-4)
    generator = torch.Generator().manual_seed(0)
    images = torch.rand(8, 3, 64, 64, generator=generator).to(device) * 2 - 1
    noise = torch.randn(images.shape, generator=generator).to(device)
    timesteps = torch.randint(0, 1000, (images.shape[0],), generator=generator).to(device)
    unet.train()
    for step in range(1, steps + 1):
        start = time.perf_counter()
        noisy = scheduler.add_noise(images, noise, timesteps)
        loss = F.mse_loss(unet(noisy, timesteps).sample, noise)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        value = loss.item()
        print(f"{step}/{steps} loss: {value:.6f}")
        print(f"train step time: {(time.perf_counter() - start) * 1000:.2f} ms")
    unet.eval()
    pipeline = DDPMPipeline(unet=unet, scheduler=scheduler).to(device)
    pipeline.set_progress_bar_config(disable=True)
    start = time.perf_counter()
    sample_generator = torch.Generator(device="cpu").manual_seed(0)
    image = pipeline(
        batch_size=2, generator=sample_generator, num_inference_steps=25, output_type="np"
    ).images
    print(f"sampling time: {(time.perf_counter() - start) * 1000:.1f} ms")
    print(f"image mean: {float(image.mean()):.6f}")
    print(f"image std: {float(image.std()):.6f}")


if __name__ == "__main__":
    main()

"""Render preview images for the model card with a Stable Diffusion pipeline."""

import sys

import torch
from diffusers import StableDiffusionPipeline


def render(prompt: str, out: str, xformers: bool = False) -> None:
    pipe = StableDiffusionPipeline.from_pretrained(
        "runwayml/stable-diffusion-v1-5", torch_dtype=torch.float16
    ).to("cuda")
    if xformers:
        pipe.enable_xformers_memory_efficient_attention()
    pipe(prompt).images[0].save(out)


if __name__ == "__main__":
    render("a llama reading a paper", "card.png", "--enable_xformers_memory_efficient_attention" in sys.argv)

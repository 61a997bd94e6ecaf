"""The pipeline's stages: load (specs read and checked), build (what would be written), write."""

# The catalog image: opm serves the file-based catalog in {{ catalog_dir }}/, which
# `make catalog` (operator-rs generate catalog) writes, one bundle version at a time.
# Build it with `make catalog-build`; OLM's CatalogSource (or OLM v1's ClusterCatalog) points at it.
FROM {{ opm_image }} AS builder
# Copy the catalog to /configs and pre-populate opm's serve cache.
ADD {{ catalog_dir }} /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]

FROM {{ opm_image }}
ENTRYPOINT ["/bin/opm"]
CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]
COPY --from=builder /configs /configs
COPY --from=builder /tmp/cache /tmp/cache

# Where the file-based catalog is in the image.
LABEL operators.operatorframework.io.index.configs.v1=/configs

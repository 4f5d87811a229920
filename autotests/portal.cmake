# limen-portal and src/core tests (owned by the frontend).

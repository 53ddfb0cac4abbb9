# The bad env takes no inputs.

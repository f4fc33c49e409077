"""zerorename_bridge: where the model and the reference meet (test machinery only).

The model package never imports the reference and the reference never imports the model; this
package imports both, so that the model's harness and property suites can drive the reference
committers, on model stores or on real ones (moto, Ceph RGW).
"""
